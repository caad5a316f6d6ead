import { createHash } from 'node:crypto';
import type { KindName } from '@gantry/crds';
import { compilePublished, PUBLISHED_FORMAT } from '@gantry/dataplane/config/published';
import { describe, expect, it } from 'vitest';
import type { ObservedObject, World } from '../world.ts';
import { plan, type ReadyVerdict } from './plan.ts';

let uid = 0;
const obj = (kind: KindName, name: string, spec: object, generation = 1): ObservedObject => ({
  kind,
  metadata: { name, namespace: 'gantry', uid: `uid-${++uid}`, generation },
  spec,
});

const deployment = (name: string, model: string, extra: object = {}) =>
  obj('ModelDeployment', name, {
    model,
    provider: 'openai',
    upstreamModel: model,
    baseUrl: 'http://127.0.0.1:1/v1',
    credentialsSecretRef: { name: 'openai', key: 'apiKey' },
    ...extra,
  });
const tenant = (name: string, models: string[], extra: object = {}) =>
  obj('Tenant', name, { tier: 'pro', models, ...extra });
const apiKey = (name: string, tenantName: string, secret = `${name}-key`) =>
  obj('ApiKey', name, { tenantRef: { name: tenantName }, secretRef: { name: secret } });

const baseSecrets: [string, Record<string, string>][] = [
  ['openai', { apiKey: 'sk-upstream' }],
  ['ci-key', { key: 'sk-gantry-ci' }],
];
const world = (objects: ObservedObject[], secrets = baseSecrets): World => ({
  namespace: 'gantry',
  objects,
  secrets: new Map(secrets),
});
const healthy = () => [
  deployment('gpt-a', 'gpt-4o-mini'),
  tenant('acme', ['gpt-4o-mini']),
  apiKey('ci', 'acme'),
];
const verdict = (verdicts: ReadyVerdict[], kind: KindName, name: string) =>
  verdicts.find((v) => v.kind === kind && v.name === name);

describe('plan', () => {
  it('publishes a healthy world whole, keys only as hashes, credentials beside the manifests', () => {
    const p = plan(world(healthy()));
    expect(p.manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([
      'ApiKey/ci',
      'ModelDeployment/gpt-a',
      'Tenant/acme',
    ]);
    const key = p.manifests.find((m) => m.kind === 'ApiKey')!;
    expect(key.spec).toEqual({
      tenantRef: { name: 'acme' },
      keyHash: createHash('sha256').update('sk-gantry-ci').digest('hex'),
    });
    expect(JSON.stringify(p.manifests)).not.toContain('sk-gantry-ci');
    expect(JSON.stringify(p.manifests)).not.toContain('sk-upstream');
    expect(p.credentials).toEqual({ 'gpt-a': 'sk-upstream' });
    expect(p.verdicts.every((v) => v.ready && v.reason === 'Published')).toBe(true);
    expect(p.generate).toEqual([]);
  });

  it('is deterministic: the same world in any order gives the same hash', () => {
    const a = plan(world(healthy()));
    const b = plan(world([...healthy()].reverse()));
    expect(b.hash).toBe(a.hash);
    expect(plan(world([...healthy(), tenant('other', ['*'])])).hash).not.toBe(a.hash);
  });

  it('what it publishes compiles in the data plane, credentials included', () => {
    const p = plan(world(healthy()));
    const doc = {
      format: PUBLISHED_FORMAT,
      version: 7,
      hash: p.hash,
      manifests: p.manifests,
      credentials: p.credentials,
    };
    const result = compilePublished(JSON.stringify(doc), { env: {}, source: 'test' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.snapshot.version).toBe(7);
    expect(result.snapshot.models.get('gpt-4o-mini')?.deployments[0]?.target.apiKey).toBe('sk-upstream');
    expect(result.snapshot.keys.size).toBe(1);
  });

  const broken: {
    name: string;
    objects: () => ObservedObject[];
    secrets?: [string, Record<string, string>][];
    kind: KindName;
    object: string;
    reason: string;
    stillServed: string[];
  }[] = [
    {
      name: 'ApiKey naming a missing Tenant',
      objects: () => [...healthy(), apiKey('stray', 'nobody', 'ci-key-b')],
      secrets: [...baseSecrets, ['ci-key-b', { key: 'sk-b' }]],
      kind: 'ApiKey',
      object: 'stray',
      reason: 'TenantNotFound',
      stillServed: ['ApiKey/ci'],
    },
    {
      name: 'Tenant naming a missing GuardrailPolicy, which takes its keys out too',
      objects: () => [
        deployment('gpt-a', 'gpt-4o-mini'),
        tenant('acme', ['gpt-4o-mini'], { guardrails: { policyRef: { name: 'strict' } } }),
        apiKey('ci', 'acme'),
        tenant('beta', ['gpt-4o-mini']),
        apiKey('b', 'beta', 'ci-key-b'),
      ],
      secrets: [...baseSecrets, ['ci-key-b', { key: 'sk-b' }]],
      kind: 'Tenant',
      object: 'acme',
      reason: 'PolicyNotFound',
      stillServed: ['Tenant/beta', 'ApiKey/b', 'ModelDeployment/gpt-a'],
    },
    {
      name: 'ModelDeployment whose credentials Secret is missing',
      objects: () => [
        ...healthy(),
        deployment('gpt-b', 'gpt-4o', { credentialsSecretRef: { name: 'nope', key: 'k' } }),
      ],
      kind: 'ModelDeployment',
      object: 'gpt-b',
      reason: 'SecretNotFound',
      stillServed: ['ModelDeployment/gpt-a', 'ApiKey/ci'],
    },
    {
      name: 'ModelDeployment whose Secret lacks the key',
      objects: () => [
        ...healthy(),
        deployment('gpt-b', 'gpt-4o', { credentialsSecretRef: { name: 'openai', key: 'k' } }),
      ],
      kind: 'ModelDeployment',
      object: 'gpt-b',
      reason: 'SecretKeyNotFound',
      stillServed: ['ModelDeployment/gpt-a'],
    },
    {
      name: 'fallback to a model nobody serves',
      objects: () => [...healthy(), deployment('gpt-b', 'gpt-4o', { fallbacks: ['ghost'] })],
      kind: 'ModelDeployment',
      object: 'gpt-b',
      reason: 'ModelNotFound',
      stillServed: ['ModelDeployment/gpt-a', 'Tenant/acme'],
    },
    {
      name: 'two ApiKeys with one key',
      objects: () => [...healthy(), apiKey('twin', 'acme', 'ci-key')],
      kind: 'ApiKey',
      object: 'twin',
      reason: 'DuplicateKey',
      stillServed: ['ApiKey/ci'],
    },
    {
      name: 'an ApiKey Secret without its data key is never overwritten',
      objects: () => [...healthy(), apiKey('empty', 'acme', 'empty-secret')],
      secrets: [...baseSecrets, ['empty-secret', { other: 'x' }]],
      kind: 'ApiKey',
      object: 'empty',
      reason: 'SecretKeyNotFound',
      stillServed: ['ApiKey/ci'],
    },
    {
      name: 'a spec the schema rejects',
      objects: () => [...healthy(), obj('CachePolicy', 'bad', { alpha: 7 })],
      kind: 'CachePolicy',
      object: 'bad',
      reason: 'InvalidSpec',
      stillServed: ['ApiKey/ci', 'Tenant/acme'],
    },
    {
      name: 'an ApiKey with neither secretRef nor keyHash',
      objects: () => [...healthy(), obj('ApiKey', 'bare', { tenantRef: { name: 'acme' } })],
      kind: 'ApiKey',
      object: 'bare',
      reason: 'InvalidSpec',
      stillServed: ['ApiKey/ci'],
    },
  ];
  it.each(broken)('$name: Ready=False $reason, the rest keeps serving', (c) => {
    const p = plan(world(c.objects(), c.secrets));
    const v = verdict(p.verdicts, c.kind, c.object);
    expect(v).toMatchObject({ ready: false, reason: c.reason });
    expect(v?.message.length).toBeGreaterThan(5);
    const published = p.manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    expect(published).not.toContain(`${c.kind}/${c.object}`);
    for (const s of c.stillServed) expect(published).toContain(s);
    const doc = {
      format: PUBLISHED_FORMAT,
      version: 1,
      hash: p.hash,
      manifests: p.manifests,
      credentials: p.credentials,
    };
    expect(compilePublished(JSON.stringify(doc), { env: {}, source: 't' }).ok).toBe(true);
  });

  it('an ApiKey whose Secret does not exist asks for a generated key and waits for it', () => {
    const objects = [...healthy(), apiKey('fresh', 'acme', 'fresh-key')];
    const p = plan(world(objects));
    expect(p.generate).toEqual([{ apiKey: objects[3]!.metadata, secretName: 'fresh-key', dataKey: 'key' }]);
    expect(verdict(p.verdicts, 'ApiKey', 'fresh')).toMatchObject({ ready: false, reason: 'KeyPending' });
    const after = plan(world(objects, [...baseSecrets, ['fresh-key', { key: 'sk-generated' }]]));
    expect(after.generate).toEqual([]);
    expect(verdict(after.verdicts, 'ApiKey', 'fresh')).toMatchObject({ ready: true });
  });

  it('a tenant listing a model nobody serves stays in, Ready=False ModelNotFound', () => {
    const p = plan(
      world([...healthy().slice(0, 1), tenant('acme', ['gpt-4o-mini', 'ghost']), apiKey('ci', 'acme')]),
    );
    expect(verdict(p.verdicts, 'Tenant', 'acme')).toMatchObject({ ready: false, reason: 'ModelNotFound' });
    expect(p.manifests.some((m) => m.kind === 'Tenant')).toBe(true);
    expect(verdict(p.verdicts, 'ApiKey', 'ci')).toMatchObject({ ready: true });
  });

  it('verdicts carry the generation they judged', () => {
    const objects = [
      deployment('gpt-a', 'gpt-4o-mini'),
      obj('Tenant', 'acme', { tier: 'pro', models: ['*'] }, 4),
    ];
    expect(verdict(plan(world(objects)).verdicts, 'Tenant', 'acme')?.generation).toBe(4);
  });

  it('credentials of a left-out deployment are not published', () => {
    const p = plan(world([...healthy(), deployment('gpt-b', 'gpt-4o', { fallbacks: ['ghost'] })]));
    expect(Object.keys(p.credentials)).toEqual(['gpt-a']);
  });
});
