import { describe, expect, it } from 'vitest';
import { apiVersion, causeFields, newRegistry, statusOf, team } from './helpers.js';

describe('create', () => {
  it('sets uid, resourceVersion, generation and creationTimestamp, and stores what it returns', async () => {
    const { registry, clock } = newRegistry();
    const { object } = await registry.teams.create(team('platform', { displayName: 'Platform', users: ['ana'] }));
    expect(object.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(object.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(object.metadata.generation).toBe(1);
    expect(object.metadata.creationTimestamp).toBe(new Date(clock.time).toISOString().replace('.000Z', 'Z'));
    expect(await registry.teams.get('platform')).toEqual(object);
  });

  it('clears the namespace, status and every server-owned field a client sends', async () => {
    const { registry } = newRegistry();
    const { object } = await registry.teams.create({
      ...team('a', {}),
      metadata: {
        name: 'a',
        namespace: 'tenant',
        uid: 'client-uid',
        generation: 9,
        creationTimestamp: '2000-01-01T00:00:00Z',
        deletionTimestamp: '2000-01-01T00:00:00Z',
        deletionGracePeriodSeconds: 5,
        selfLink: '/x',
      },
      status: {},
    });
    expect(object.metadata.namespace).toBeUndefined();
    expect(object.metadata.uid).not.toBe('client-uid');
    expect(object.metadata.generation).toBe(1);
    expect(object.metadata.creationTimestamp).not.toBe('2000-01-01T00:00:00Z');
    expect(object.metadata.deletionTimestamp).toBeUndefined();
    expect(object.metadata.deletionGracePeriodSeconds).toBeUndefined();
    expect(object.metadata.selfLink).toBeUndefined();
    expect(object.status).toBeUndefined();
  });

  it('accepts creationTimestamp: null as kubectl sends it', async () => {
    const { registry } = newRegistry();
    const { object } = await registry.teams.create({ ...team('a'), metadata: { name: 'a', creationTimestamp: null } });
    expect(object.metadata.creationTimestamp).toMatch(/Z$/);
  });

  it('infers kind and apiVersion from the endpoint and refuses others', async () => {
    const { registry } = newRegistry();
    const { object } = await registry.teams.create({ metadata: { name: 'inferred' } });
    expect([object.apiVersion, object.kind]).toEqual([apiVersion, 'Team']);
    const wrongVersion = await statusOf(registry.teams.create({ ...team('b'), apiVersion: 'management.service/v2' }));
    expect(wrongVersion).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'the API version in the data (management.service/v2) does not match the expected API version (management.service/v1)',
    });
    const wrongKind = await statusOf(registry.teams.create({ ...team('b'), kind: 'OwnedAccessKey' }));
    expect(wrongKind).toMatchObject({ code: 400, message: 'the kind in the data (OwnedAccessKey) does not match the expected kind (Team)' });
  });

  it.each([
    ['an array', []],
    ['a string', 'team'],
    ['null', null],
    ['a number', 3],
  ])('answers 400 for a body that is %s', async (_label, body) => {
    const { registry } = newRegistry();
    expect(await statusOf(registry.teams.create(body))).toMatchObject({ code: 400, reason: 'BadRequest' });
  });

  it('refuses a resourceVersion on create', async () => {
    const { registry } = newRegistry();
    const s = await statusOf(registry.teams.create(team('a', {}, { resourceVersion: '5' })));
    expect(s).toMatchObject({ code: 400, message: 'resourceVersion should not be set on objects to be created' });
  });

  it('answers 409 AlreadyExists with kube details for a taken name', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('a'));
    const s = await statusOf(registry.teams.create(team('a')));
    expect(s).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'teams.management.service "a" already exists',
      details: { name: 'a', group: 'management.service', kind: 'teams' },
    });
  });

  describe('generateName', () => {
    it('appends a 5-character suffix from the consonant alphabet', async () => {
      const { registry } = newRegistry();
      const { object } = await registry.teams.create({ metadata: { generateName: 'ci-' } });
      expect(object.metadata.name).toMatch(/^ci-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(object.metadata.generateName).toBe('ci-');
    });

    it('cuts a long prefix to 58 characters so the name fits in 63', async () => {
      const { registry } = newRegistry();
      const prefix = `${'a'.repeat(70)}-`;
      const { object } = await registry.teams.create({ metadata: { generateName: prefix } });
      expect(object.metadata.name).toHaveLength(63);
      expect(object.metadata.name!.startsWith('a'.repeat(58))).toBe(true);
    });

    it('retries a collision with a new suffix', async () => {
      const names = ['x-aaaaa', 'x-aaaaa', 'x-bbbbb'];
      const { registry } = newRegistry({ generateName: () => names.shift()! });
      await registry.teams.create({ metadata: { generateName: 'x-' } });
      const { object } = await registry.teams.create({ metadata: { generateName: 'x-' } });
      expect(object.metadata.name).toBe('x-bbbbb');
    });

    it('answers 409 with retryAfterSeconds when 8 tries all collide', async () => {
      let calls = 0;
      const { registry } = newRegistry({
        generateName: () => {
          calls++;
          return 'x-zzzzz';
        },
      });
      await registry.teams.create({ metadata: { generateName: 'x-' } });
      calls = 0;
      const s = await statusOf(registry.teams.create({ metadata: { generateName: 'x-' } }));
      expect(calls).toBe(8);
      expect(s).toMatchObject({
        code: 409,
        reason: 'AlreadyExists',
        message:
          'teams.management.service "x-zzzzz" already exists, the server was not able to generate a unique name for the object',
        details: { retryAfterSeconds: 1 },
      });
    });

    it('rejects an invalid prefix on metadata.generateName', async () => {
      const { registry } = newRegistry();
      const s = await statusOf(registry.teams.create({ metadata: { generateName: 'Bad_' } }));
      expect(s.code).toBe(422);
      expect(causeFields(s)).toEqual(['metadata.generateName']);
    });
  });

  it('dryRun=All validates and answers without storing', async () => {
    const { registry, store } = newRegistry();
    const before = await store.currentRevision();
    const { object } = await registry.teams.create(team('dry'), { dryRun: true });
    expect(object.metadata.name).toBe('dry');
    expect(await store.currentRevision()).toBe(before);
    expect(await statusOf(registry.teams.get('dry'))).toMatchObject({ code: 404, message: 'teams.management.service "dry" not found' });
    await registry.teams.create(team('taken'));
    expect((await statusOf(registry.teams.create(team('taken'), { dryRun: true }))).reason).toBe('AlreadyExists');
  });

  describe('unknown fields', () => {
    const body = { ...team('a', { users: ['x'], colour: 'blue' }), extra: 1, metadata: { name: 'a', nickname: 'z' } };

    it('Warn (the default) drops them and names each in a warning', async () => {
      const { registry } = newRegistry();
      const { object, warnings } = await registry.teams.create(body);
      expect(warnings).toEqual(['unknown field "extra"', 'unknown field "metadata.nickname"', 'unknown field "spec.colour"']);
      expect(object.spec).toEqual({ users: ['x'] });
      expect('extra' in object).toBe(false);
    });

    it('Strict refuses them with 400 naming every one', async () => {
      const { registry } = newRegistry();
      const s = await statusOf(registry.teams.create(body, { fieldValidation: 'Strict' }));
      expect(s).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: 'strict decoding error: unknown field "extra", unknown field "metadata.nickname", unknown field "spec.colour"',
      });
    });

    it('Ignore drops them silently', async () => {
      const { registry } = newRegistry();
      const { object, warnings } = await registry.teams.create(body, { fieldValidation: 'Ignore' });
      expect(warnings).toEqual([]);
      expect(object.spec).toEqual({ users: ['x'] });
    });
  });
});
