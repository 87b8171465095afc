"""Drives a served teamkeys with the Kubernetes Python client (Debian's python3-kubernetes).

Usage: python3 python-client.py URL TOKEN CA_FILE
Each step prints `ok <name>`; any failure raises, so the exit code is not 0 and the traceback says where.
"""
import json
import sys
import time

from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

url, token, ca = sys.argv[1:4]
GROUP, VERSION = 'management.service', 'v1'


def ok(name):
    print(f'ok {name}', flush=True)


def status_of(call):
    """The HTTP status an ApiException carries, or 200 when the call succeeds."""
    try:
        call()
        return 200
    except ApiException as err:
        return err.status


config = client.Configuration()
config.host = url
config.ssl_ca_cert = ca
config.verify_ssl = True
config.api_key = {'authorization': token}
config.api_key_prefix = {'authorization': 'Bearer'}
api = client.ApiClient(config)

# Discovery: the dynamic client reads /version, /api and /apis, then the group's resource list.
dyn = dynamic.DynamicClient(api)
teams = dyn.resources.get(api_version=f'{GROUP}/{VERSION}', kind='Team')
assert teams.name == 'teams' and not teams.namespaced, teams
ok('discovery')

# The typed discovery calls ask with a trailing slash (/version/, /apis/, /api/), as kube serves both spellings.
assert client.VersionApi(api).get_code().git_version.startswith('v1.'), 'version'
groups = client.ApisApi(api).get_api_versions()
assert f'{GROUP}/{VERSION}' in [v.group_version for g in groups.groups for v in g.versions], groups
assert client.CoreApi(api).get_api_versions().versions == ['v1']
ok('discovery with a trailing slash')

labels = {'client': 'python'}
for name in ['py-a', 'py-b', 'py-c']:
    created = teams.create(body={'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'Team', 'metadata': {'name': name, 'labels': labels}, 'spec': {'displayName': name}})
    assert created.metadata.name == name and created.metadata.uid
ok('create')

got = teams.get(name='py-a')
assert got.spec.displayName == 'py-a', got
ok('get')

names, token_ = [], None
while True:
    page = teams.get(label_selector='client=python', limit=2, **({'_continue': token_} if token_ else {}))
    names += [item.metadata.name for item in page.items]
    token_ = page.metadata['continue']
    if not token_:
        break
assert names == ['py-a', 'py-b', 'py-c'], names
ok('list with a label selector, paged')

stale = teams.get(name='py-a').to_dict()
teams.patch(name='py-a', body={'spec': {'description': 'moved on'}}, content_type='application/merge-patch+json')
stale['spec']['displayName'] = 'stale'
assert status_of(lambda: teams.replace(body=stale)) == 409
fresh = teams.get(name='py-a').to_dict()
fresh['spec']['displayName'] = 'replaced'
assert teams.replace(body=fresh).spec.displayName == 'replaced'
ok('replace: stale is 409, fresh succeeds')

patched = teams.patch(name='py-b', body=[{'op': 'add', 'path': '/spec/users', 'value': ['ana']}], content_type='application/json-patch+json')
assert patched.spec.users == ['ana'], patched
patched = teams.patch(name='py-b', body={'spec': {'description': 'merged'}}, content_type='application/merge-patch+json')
assert patched.spec.description == 'merged' and patched.spec.users == ['ana'], patched
ok('JSON patch and merge patch')

assert status_of(lambda: teams.patch(name='py-b', body={'spec': {'description': 'x'}})) == 415
ok('strategic merge patch is 415')

# This client's REST layer sends an apply-patch+yaml body only as text (a dict it refuses to encode).
def applied(display_name):
    return json.dumps({'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'Team', 'metadata': {'name': 'py-ssa'}, 'spec': {'displayName': display_name}})


assert teams.server_side_apply(name='py-ssa', body=applied('first'), field_manager='py-one').spec.displayName == 'first'
assert status_of(lambda: teams.server_side_apply(name='py-ssa', body=applied('second'), field_manager='py-two')) == 409
assert teams.server_side_apply(name='py-ssa', body=applied('second'), field_manager='py-two', force_conflicts=True).spec.displayName == 'second'
ok('server-side apply: conflict without force, taken with force=True')

status = teams.status.get(name='py-a')
assert status.metadata.name == 'py-a'
replaced = teams.status.replace(body=status.to_dict())
assert replaced.metadata.name == 'py-a'
ok('status subresource')

# Watch: the Python client sends watch=True and allowWatchBookmarks=True.
custom = client.CustomObjectsApi(api)
rv = teams.get(label_selector='client=python').metadata.resourceVersion
w = watch.Watch()
seen = []
teams.patch(name='py-c', body={'spec': {'description': 'watched'}}, content_type='application/merge-patch+json')
for event in w.stream(custom.list_cluster_custom_object, GROUP, VERSION, 'teams', resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=2):
    seen.append((event['type'], event['object']['metadata'].get('name')))
    if event['type'] == 'MODIFIED':
        w.stop()
assert ('MODIFIED', 'py-c') in seen, seen
ok('watch from a resourceVersion with bookmarks allowed')

seen = [e['type'] for e in teams.watch(label_selector='client=python', timeout=1)]
assert seen.count('ADDED') == 3, seen
ok('watch without a resourceVersion starts with ADDED events')

try:
    for _ in watch.Watch().stream(custom.list_cluster_custom_object, GROUP, VERSION, 'teams', resource_version='1', timeout_seconds=2):
        pass
    raise AssertionError('a watch from a compacted resourceVersion did not fail')
except ApiException as err:
    assert err.status == 410, err
ok('watch from an expired resourceVersion raises ApiException 410')

uid = teams.get(name='py-b').metadata.uid
assert status_of(lambda: teams.delete(name='py-b', body={'preconditions': {'uid': 'not-' + uid}})) == 409
gone = teams.delete(name='py-b', body={'preconditions': {'uid': uid}}, propagation_policy='Background')
assert gone.status == 'Success', gone
assert status_of(lambda: teams.get(name='py-b')) == 404
terminating = teams.delete(name='py-c', propagation_policy='Foreground', grace_period_seconds=0)
assert 'foregroundDeletion' in (terminating.metadata.finalizers or []), terminating
deadline = time.time() + 20
while status_of(lambda: teams.get(name='py-c')) != 404:
    assert time.time() < deadline, 'the foreground deletion did not finish'
    time.sleep(0.2)
ok('delete with preconditions and propagation policies')
