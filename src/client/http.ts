/**
 * The ApiClient over HTTP(S) to any server speaking this API, kube-style: bearer token, JSON,
 * fieldManager=gitops. node:https rather than fetch, so a private CA can be trusted per client.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { auditApiVersion, type AuditEvent, type AuditFilter } from '../api/audit-event.js';
import type { Status } from '../api/errors.js';
import { apiPrefix, apiRoot, defaultGroup } from '../api/resources.js';
import { isJsonMap, type KubeObject, type ObjectList } from '../api/types.js';
import { BoundedQueue } from '../api/bounded-queue.js';
import { connectionFailure } from './connection-errors.js';
import { ClientError, gitopsManager, type ApiClient, type ClientEvent, type ClientWatch, type DeleteOptions, type KeyRotationSpec, type ApiPlural, type Plural, type RotateOptions, type WriteOptions } from './types.js';

export interface HttpClientOptions {
  /** The server URL: its API root (…/kubernetes/management), or scheme://host:port alone, which gets that path. */
  server: string;
  token: string;
  /** API group the kinds are served under (default management.service). */
  group?: string;
  /** PEM of a CA (or self-signed certificate) to trust. */
  ca?: Buffer;
  timeoutMs?: number;
}

export { apiRoot };

export class HttpClient implements ApiClient {
  readonly target: string;
  readonly apiVersion: string;
  private readonly base: URL;
  /**
   * One keep-alive agent per client: every request of a run reuses the few TLS connections it
   * opened (as many as writes in flight), and close() ends them so the process exits at once.
   */
  private readonly agent: HttpAgent;
  /** The key this client sends: the one it was given, until it rotates that very key (rotate). */
  private token: string;
  /** The name of the access key this client authenticates with, asked once (rotate). */
  private ownKeyName: Promise<string | undefined> | undefined;

  constructor(private readonly opts: HttpClientOptions) {
    this.token = opts.token;
    const group = opts.group ?? defaultGroup;
    this.apiVersion = `${group}/v1`;
    this.target = apiRoot(opts.server);
    this.base = new URL(`${this.target}/apis/${group}/v1/`);
    const keepAlive = { keepAlive: true, scheduling: 'lifo' as const };
    this.agent = this.base.protocol === 'https:' ? new HttpsAgent({ ...keepAlive, ...(opts.ca ? { ca: opts.ca } : {}) }) : new HttpAgent(keepAlive);
  }

  private send(method: string, path: string, body?: { type: string; value: unknown }): Promise<unknown> {
    const url = new URL(path, this.base);
    const payload = body ? Buffer.from(JSON.stringify(body.value)) : undefined;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.token}`,
      Accept: 'application/json',
      'User-Agent': 'teamkeys/gitops',
    };
    if (payload) {
      headers['Content-Type'] = body!.type;
      headers['Content-Length'] = String(payload.length);
    }
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers, timeout: this.opts.timeoutMs ?? 30_000, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) return resolve(parsed);
          const status = (parsed as Status | undefined)?.kind === 'Status'
            ? (parsed as Status)
            : ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, message: `${method} ${url.pathname}: HTTP ${code}` } as Status);
          reject(new ClientError(status, url.origin));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname} timed out`)));
      req.on('error', (err) => reject(new ClientError(connectionFailure(err, url, this.opts.ca !== undefined), url.origin, false)));
      if (payload) req.write(payload);
      req.end();
    });
  }

  private query(opts: WriteOptions & { fieldManager?: string } = {}): string {
    const q = new URLSearchParams({ fieldManager: opts.fieldManager ?? gitopsManager, fieldValidation: 'Strict' });
    if (opts.dryRun) q.set('dryRun', 'All');
    return `?${q.toString()}`;
  }

  /** Every object of `plural` the key may list; `fieldSelector` narrows them as kube's does. */
  async list(plural: ApiPlural, fieldSelector?: string): Promise<KubeObject[]> {
    const items: KubeObject[] = [];
    let token = '';
    const selected = fieldSelector ? `&fieldSelector=${encodeURIComponent(fieldSelector)}` : '';
    do {
      const page = (await this.send('GET', `${plural}?limit=500${selected}${token ? `&continue=${encodeURIComponent(token)}` : ''}`).catch((err: unknown) => {
        if (!(err instanceof ClientError && err.code === 404)) throw err;
        const message = `${this.target} serves no ${plural} of ${this.apiVersion}: --server must be the API's URL (like https://host:8080${apiPrefix}), and --api-group the group it serves`;
        throw new ClientError({ ...err.status, message }, err.transport);
      })) as ObjectList;
      items.push(...page.items);
      token = page.metadata.continue ?? '';
    } while (token);
    return items;
  }

  /**
   * `kubectl auth can-i VERB RESOURCE` for this client's key: a SelfSubjectAccessReview of every
   * object of `plural`, answered by the server's own authorizer.
   */
  async canI(verb: string, plural: Plural): Promise<{ allowed: boolean; reason?: string }> {
    const group = this.apiVersion.split('/')[0];
    const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb, group, resource: plural } } };
    const res = (await this.send('POST', '../../authorization.k8s.io/v1/selfsubjectaccessreviews', { type: 'application/json', value: review })) as { status?: { allowed?: boolean; reason?: string } };
    return { allowed: res.status?.allowed === true, ...(res.status?.reason ? { reason: res.status.reason } : {}) };
  }

  /** `kubectl auth whoami`: the name the server knows this client's key by. */
  async whoami(): Promise<string> {
    const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
    const res = (await this.send('POST', '../../authentication.k8s.io/v1/selfsubjectreviews', { type: 'application/json', value: review })) as { status?: { userInfo?: { username?: string } } };
    return res.status?.userInfo?.username ?? '';
  }

  async get(plural: ApiPlural, name: string): Promise<KubeObject | undefined> {
    try {
      return (await this.send('GET', `${plural}/${encodeURIComponent(name)}`)) as KubeObject;
    } catch (err) {
      if (err instanceof ClientError && err.code === 404) return undefined;
      throw err;
    }
  }

  async create(plural: ApiPlural, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject> {
    return (await this.send('POST', `${plural}${this.query(opts)}`, { type: 'application/json', value: obj })) as KubeObject;
  }

  async replace(plural: ApiPlural, name: string, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject> {
    return (await this.send('PUT', `${plural}/${encodeURIComponent(name)}${this.query(opts)}`, { type: 'application/json', value: obj })) as KubeObject;
  }

  async patch(plural: ApiPlural, name: string, ops: unknown[], opts?: WriteOptions): Promise<KubeObject> {
    return (await this.send('PATCH', `${plural}/${encodeURIComponent(name)}${this.query(opts)}`, { type: 'application/json-patch+json', value: ops })) as KubeObject;
  }

  /**
   * Rotates a key. When it is the key this client authenticates with, the client goes on with the
   * new value: its old one is now the key's previous value, which may not write access keys (the
   * confirmation that follows, or any later key write of the run, would be refused).
   */
  async rotate(name: string, spec: KeyRotationSpec, opts: RotateOptions = {}): Promise<KubeObject> {
    const { resourceVersion, ...rest } = opts;
    const body = { apiVersion: this.apiVersion, kind: 'KeyRotation', ...(resourceVersion ? { metadata: { resourceVersion } } : {}), spec };
    const own = spec.confirm || rest.dryRun ? undefined : await this.accessKeyName();
    const rotated = (await this.send('POST', `ownedaccesskeys/${encodeURIComponent(name)}/rotation${this.query(rest)}`, { type: 'application/json', value: body })) as KubeObject;
    const value = isJsonMap(rotated.spec) ? rotated.spec.key : undefined;
    if (own === name && typeof value === 'string') this.token = value;
    return rotated;
  }

  /** The name of the access key this client authenticates with (SelfSubjectReview's extra), or undefined when the server does not say. */
  /** PUT accessrequests/NAME/approval: the object with an Approved or Denied condition added (as kube approves a CSR). */
  async decideAccessRequest(name: string, obj: KubeObject): Promise<KubeObject> {
    return (await this.send('PUT', `accessrequests/${encodeURIComponent(name)}/approval`, { type: 'application/json', value: obj })) as KubeObject;
  }

  private accessKeyName(): Promise<string | undefined> {
    this.ownKeyName ??= (async () => {
      const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
      const res = (await this.send('POST', '../../authentication.k8s.io/v1/selfsubjectreviews', { type: 'application/json', value: review })) as {
        status?: { userInfo?: { extra?: Record<string, string[]> } };
      };
      return res.status?.userInfo?.extra?.[`${this.apiVersion.split('/')[0]}/access-key`]?.[0];
    })().catch(() => undefined);
    return this.ownKeyName;
  }

  async delete(plural: ApiPlural, name: string, opts: DeleteOptions = {}): Promise<void> {
    const body = { kind: 'DeleteOptions', apiVersion: 'v1', ...(opts.preconditions ? { preconditions: opts.preconditions } : {}), ...(opts.dryRun ? { dryRun: ['All'] } : {}) };
    await this.send('DELETE', `${plural}/${encodeURIComponent(name)}`, { type: 'application/json', value: body });
  }

  watch(plural: ApiPlural): ClientWatch {
    const queue = new BoundedQueue<ClientEvent>(10_000);
    let req: ReturnType<typeof httpRequest> | undefined;
    const start = async () => {
      // Watch from the current revision, so the objects that exist are not replayed.
      const { metadata } = (await this.send('GET', `${plural}?limit=1`)) as ObjectList;
      const url = new URL(`${plural}?watch=true&allowWatchBookmarks=true&resourceVersion=${metadata.resourceVersion}`, this.base);
      const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
      req = request(url, { headers: { Authorization: `Bearer ${this.token}`, Accept: 'application/json' }, ...(this.opts.ca ? { ca: this.opts.ca } : {}) }, (res) => {
        if ((res.statusCode ?? 0) >= 300) {
          queue.fail(new Error(`watch ${plural}: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim()) queue.push(JSON.parse(line) as ClientEvent);
          }
        });
        res.on('end', () => queue.end());
      });
      req.on('error', (err) => queue.fail(err));
      req.end();
    };
    start().catch((err: unknown) => queue.fail(err));
    return {
      stop: () => {
        queue.end();
        req?.destroy();
      },
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  /** Set once the server showed it does not serve the audit trail to this caller: not asked again, the same error given. */
  private auditRefused: ClientError | undefined;

  async auditEvents(filter: AuditFilter): Promise<AuditEvent[]> {
    if (this.auditRefused) throw this.auditRefused;
    const q = new URLSearchParams(Object.entries(filter).map(([k, v]): [string, string] => [k, String(v)]));
    // Under the same API root as every other request: a --server without a path gets the prefix here too.
    const url = new URL(`${this.target}/apis/${auditApiVersion}/events?${q.toString()}`);
    try {
      return ((await this.send('GET', url.href)) as { items: AuditEvent[] }).items;
    } catch (err) {
      // Not served (404), not allowed (403), or an older server: said once, in the report, and not asked again.
      if (err instanceof ClientError && [403, 404, 405].includes(err.code)) {
        const why = err.code === 403 ? 'this key may not read the audit trail (it needs management-admin)' : 'the server does not serve the audit trail there';
        this.auditRefused = new ClientError({ ...err.status, message: `GET ${url.pathname}: HTTP ${err.code}: ${why}` }, err.transport);
        throw this.auditRefused;
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}
