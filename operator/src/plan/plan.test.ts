import { createHash } from 'node:crypto';
import type { KindName } from '@gantry/crds';
import { compilePublished, packSnapshot, PUBLISHED_FORMAT } from '@gantry/dataplane/config/published';
import { describe, expect, it } from 'vitest';
import type { ObservedObject, World } from '../world.ts';
import {
  CREDENTIALS_LABEL,
  MAX_MESSAGE_CHARS,
  MAX_SNAPSHOT_BYTES,
  plan,
  sizeAgainstLimit,
  snapshotText,
  withGenerationFailures,
  type ReadyVerdict,
} from './plan.ts';

let uid = 0;
const obj = (kind: KindName, name: string, spec: object, generation = 1): ObservedObject => ({
  kind,
  metadata: { name, namespace: 'gantry', uid: `uid-${String(++uid).padStart(6, '0')}`, generation },
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
const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');
const asProvider = { [CREDENTIALS_LABEL]: 'provider' };
const asKey = { [CREDENTIALS_LABEL]: 'apikey' };
/** A Secret an ApiKey names (or named *-key) holds a key here, any other provider credentials. */
const optedIn = (name: string, objects: readonly ObservedObject[]) =>
  name.endsWith('-key') ||
  objects.some(
    (o) => o.kind === 'ApiKey' && (o.spec as { secretRef?: { name: string } }).secretRef?.name === name,
  )
    ? asKey
    : asProvider;
/** Every Secret opted in for its use unless `labels` says otherwise, so other rules are tested on their own. */
const world = (
  objects: ObservedObject[],
  secrets = baseSecrets,
  generatedKeys: [string, string][] = [],
  labels: [string, Record<string, string>][] = secrets.map(([name]) => [name, optedIn(name, objects)]),
): World => ({
  namespace: 'gantry',
  objects,
  secrets: new Map(secrets),
  secretLabels: new Map(labels),
  snapshotSecret: 'gantry-snapshot',
  generatedKeys: new Map(generatedKeys),
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

  describe('a credentials Secret opts in with the label gantry.dev/credentials=provider', () => {
    const other = deployment('gpt-b', 'gpt-4o', { credentialsSecretRef: { name: 'redis', key: 'password' } });
    const secrets: [string, Record<string, string>][] = [...baseSecrets, ['redis', { password: 'redis-pw' }]];
    const labelled = (redis: Record<string, string>): [string, Record<string, string>][] => [
      ['openai', asProvider],
      ['ci-key', asKey],
      ['redis', redis],
    ];

    it('an unlabelled Secret is SecretNotLabelled with the command that labels it; its value is not published', () => {
      const p = plan(world([...healthy(), other], secrets, [], labelled({ app: 'redis' })));
      expect(verdict(p.verdicts, 'ModelDeployment', 'gpt-b')).toMatchObject({
        ready: false,
        reason: 'SecretNotLabelled',
        message:
          'Secret redis is not labelled gantry.dev/credentials=provider, so it may not serve as provider credentials; if it is meant to: kubectl -n gantry label secret redis gantry.dev/credentials=provider',
      });
      expect(p.manifests.map((m) => m.metadata.name)).not.toContain('gpt-b');
      expect(JSON.stringify(p)).not.toContain('redis-pw');
      // The rest keeps serving.
      expect(p.credentials).toEqual({ 'gpt-a': 'sk-upstream' });
      expect(verdict(p.verdicts, 'ModelDeployment', 'gpt-a')).toMatchObject({ ready: true });
    });

    it('a Secret without any labels is refused too; once labelled, the same deployment is published', () => {
      const before = plan(
        world(
          [...healthy(), other],
          secrets,
          [],
          [
            ['openai', asProvider],
            ['ci-key', asKey],
          ],
        ),
      );
      expect(verdict(before.verdicts, 'ModelDeployment', 'gpt-b')?.reason).toBe('SecretNotLabelled');
      // The label does not open a Secret no ModelDeployment may name (an ApiKey's key).
      const thief = deployment('thief', 'steal', { credentialsSecretRef: { name: 'ci-key', key: 'key' } });
      const after = plan(world([...healthy(), other, thief], secrets, [], labelled(asProvider)));
      expect(verdict(after.verdicts, 'ModelDeployment', 'thief')?.reason).toBe('SecretNotAllowed');
      expect(verdict(after.verdicts, 'ModelDeployment', 'gpt-b')).toMatchObject({
        ready: true,
        reason: 'Published',
      });
      expect(after.credentials).toEqual({ 'gpt-a': 'sk-upstream', 'gpt-b': 'redis-pw' });
      expect(after.hash).not.toBe(before.hash);
    });

    it.each(['true', 'Provider', 'yes', ''])(
      'the label with the value %o is refused (only "provider" opts in)',
      (value) => {
        const p = plan(world([...healthy(), other], secrets, [], labelled({ [CREDENTIALS_LABEL]: value })));
        expect(verdict(p.verdicts, 'ModelDeployment', 'gpt-b')).toMatchObject({
          ready: false,
          reason: 'SecretNotLabelled',
          message: `Secret redis is labelled gantry.dev/credentials=${value}, not provider, so it may not serve as provider credentials; if it is meant to: kubectl -n gantry label secret redis gantry.dev/credentials=provider --overwrite`,
        });
        expect(p.credentials['gpt-b']).toBeUndefined();
      },
    );
  });

  describe('one use per Secret: provider for a ModelDeployment, apikey for an ApiKey', () => {
    it('a ModelDeployment waiting for a Secret labelled apikey never gets it, though no ApiKey names it yet', () => {
      // The reviewer's order: the attacker's deployment waits (SecretNotFound); the victim makes
      // and labels the key Secret before (or while GitOps replaces) the ApiKey naming it.
      const evil = deployment('evil', 'm', {
        baseUrl: 'https://attacker.example/v1',
        credentialsSecretRef: { name: 'team-a-key', key: 'key' },
      });
      const objects = [deployment('gpt-a', 'gpt-4o-mini'), tenant('mallory', ['*']), evil];
      const secrets: [string, Record<string, string>][] = [
        ['openai', { apiKey: 'sk-upstream' }],
        ['team-a-key', { key: 'gw-key-of-team-a' }],
      ];
      const p = plan(
        world(
          objects,
          secrets,
          [],
          [
            ['openai', asProvider],
            ['team-a-key', asKey],
          ],
        ),
      );
      expect(verdict(p.verdicts, 'ModelDeployment', 'evil')).toMatchObject({
        ready: false,
        reason: 'SecretNotAllowed',
        message:
          "Secret team-a-key is labelled gantry.dev/credentials=apikey, for an ApiKey's key only; spec.credentialsSecretRef may not name it. If it holds provider credentials instead: kubectl -n gantry label secret team-a-key gantry.dev/credentials=provider --overwrite",
      });
      expect(JSON.stringify(p)).not.toContain('gw-key-of-team-a');
      expect(p.credentials).toEqual({ 'gpt-a': 'sk-upstream' });
    });

    it('an ApiKey naming a Secret labelled provider is refused before anything of it is hashed', () => {
      // Else a keyHash guess told the provider key through DuplicateKey.
      const guess = obj('ApiKey', 'guess', { tenantRef: { name: 'acme' }, keyHash: sha256('sk-upstream') });
      const probe = apiKey('probe', 'acme', 'openai');
      const p = plan(
        world(
          [...healthy(), guess, probe],
          baseSecrets,
          [],
          [
            ['openai', asProvider],
            ['ci-key', asKey],
          ],
        ),
      );
      expect(verdict(p.verdicts, 'ApiKey', 'probe')).toMatchObject({
        ready: false,
        reason: 'SecretNotAllowed',
        message:
          "Secret openai is labelled gantry.dev/credentials=provider, for provider credentials only; spec.secretRef may not name it. If it holds an ApiKey's key instead: kubectl -n gantry label secret openai gantry.dev/credentials=apikey --overwrite",
      });
      expect(verdict(p.verdicts, 'ApiKey', 'guess')).toMatchObject({ ready: true });
      expect(JSON.stringify(p.verdicts)).not.toContain('DuplicateKey');
      expect(verdict(p.verdicts, 'ModelDeployment', 'gpt-a')).toMatchObject({ ready: true });
    });
  });

  describe('apiKeyEnv names only a provider variable the data-plane pods offer', () => {
    // The chart puts GANTRY_REDIS_PASSWORD (and the admin key) in the pods' env; the key of an
    // apiKeyEnv goes to the baseUrl the deployment's author picks.
    const byEnv = (name: string) =>
      deployment('evil', 'x', {
        baseUrl: 'http://evil.example/v1',
        credentialsSecretRef: undefined,
        apiKeyEnv: name,
      });
    const served = (p: ReturnType<typeof plan>, env: Record<string, string>) => {
      const doc = {
        format: PUBLISHED_FORMAT,
        version: 1,
        hash: p.hash,
        manifests: p.manifests,
        credentials: p.credentials,
      };
      const r = compilePublished(JSON.stringify(doc), { env, source: 't' });
      if (!r.ok) throw new Error(r.errors.join('; '));
      return [...r.snapshot.models.values()].flatMap((m) => m.deployments.map((d) => d.target));
    };

    it.each(['GANTRY_REDIS_PASSWORD', 'GANTRY_ADMIN_KEY', 'gantry_compaction_secret'])(
      '%s is EnvNotAllowed, listed or not, and not published',
      (name) => {
        const p = plan({ ...world([...healthy(), byEnv(name)]), providerEnv: new Set([name]) });
        expect(verdict(p.verdicts, 'ModelDeployment', 'evil')).toMatchObject({
          ready: false,
          reason: 'EnvNotAllowed',
          message: expect.stringContaining(
            `spec.apiKeyEnv: GANTRY_* variables are the gateway's own settings`,
          ),
        });
        expect(p.manifests.map((m) => m.metadata.name)).not.toContain('evil');
        expect(served(p, { [name]: 'redis-pw' })).not.toContainEqual(
          expect.objectContaining({ apiKey: 'redis-pw' }),
        );
        expect(verdict(p.verdicts, 'ModelDeployment', 'gpt-a')).toMatchObject({ ready: true });
      },
    );

    it('a variable the pods do not offer (KUBERNETES_*, a cloud credential) is EnvNotAllowed', () => {
      const p = plan({
        ...world([...healthy(), byEnv('AWS_SECRET_ACCESS_KEY')]),
        providerEnv: new Set(['OPENAI_API_KEY']),
      });
      expect(verdict(p.verdicts, 'ModelDeployment', 'evil')).toMatchObject({
        ready: false,
        reason: 'EnvNotAllowed',
        message:
          "spec.apiKeyEnv: AWS_SECRET_ACCESS_KEY is not a provider variable the data plane offers (GANTRY_PROVIDER_ENV, the chart's providerEnv; listed: OPENAI_API_KEY); list it there, or use spec.credentialsSecretRef",
      });
      // Without a list the pods offer nothing.
      const none = plan(world([...healthy(), byEnv('OPENAI_API_KEY')]));
      expect(verdict(none.verdicts, 'ModelDeployment', 'evil')?.message).toContain('listed: none');
    });

    it('a listed variable is published', () => {
      const p = plan({
        ...world([...healthy(), byEnv('OPENAI_API_KEY')]),
        providerEnv: new Set(['OPENAI_API_KEY']),
      });
      expect(verdict(p.verdicts, 'ModelDeployment', 'evil')).toMatchObject({
        ready: true,
        reason: 'Published',
      });
      expect(served(p, { OPENAI_API_KEY: 'sk-listed' })).toContainEqual(
        expect.objectContaining({ baseUrl: 'http://evil.example/v1', apiKey: 'sk-listed' }),
      );
    });
  });

  describe('Secrets an object may not reach', () => {
    const snapshotDoc = (p: ReturnType<typeof plan>, version: number) =>
      JSON.stringify({
        format: PUBLISHED_FORMAT,
        version,
        hash: p.hash,
        manifests: p.manifests,
        credentials: p.credentials,
      });
    const victim = apiKey('ci', 'acme');
    const victimUid = victim.metadata.uid;

    it('a ModelDeployment naming the snapshot Secret does not get every credential sent to its baseUrl', () => {
      const first = plan(world(healthy()));
      const thief = deployment('thief', 'gpt-x', {
        baseUrl: 'https://attacker.example/v1',
        credentialsSecretRef: { name: 'gantry-snapshot', key: 'snapshot.json' },
      });
      const p = plan(
        world(
          [...healthy(), thief],
          [...baseSecrets, ['gantry-snapshot', { 'snapshot.json': snapshotDoc(first, 1) }]],
        ),
      );
      expect(verdict(p.verdicts, 'ModelDeployment', 'thief')).toMatchObject({
        ready: false,
        reason: 'SecretNotAllowed',
      });
      expect(p.credentials).toEqual({ 'gpt-a': 'sk-upstream' });
    });

    it("a ModelDeployment naming an ApiKey's generated key Secret is refused", () => {
      const thief = deployment('thief', 'gpt-x', { credentialsSecretRef: { name: 'ci-key', key: 'key' } });
      const p = plan(
        world([deployment('gpt-a', 'gpt-4o-mini'), tenant('acme', ['*']), victim, thief], baseSecrets, [
          ['ci-key', victimUid],
        ]),
      );
      expect(verdict(p.verdicts, 'ModelDeployment', 'thief')).toMatchObject({ reason: 'SecretNotAllowed' });
      expect(Object.values(p.credentials)).not.toContain('sk-gantry-ci');
      expect(verdict(p.verdicts, 'ApiKey', 'ci')).toMatchObject({ ready: true });
    });

    it('an ApiKey hashing the snapshot Secret is refused, so publishing does not change the plan (no write storm)', () => {
      const selfRef = obj('ApiKey', 'loop', {
        tenantRef: { name: 'acme' },
        secretRef: { name: 'gantry-snapshot', key: 'snapshot.json' },
      });
      const objects = [...healthy(), selfRef];
      const first = plan(world(objects, [...baseSecrets, ['gantry-snapshot', { 'snapshot.json': '{}' }]]));
      const second = plan(
        world(objects, [...baseSecrets, ['gantry-snapshot', { 'snapshot.json': snapshotDoc(first, 1) }]]),
      );
      expect(second.hash).toBe(first.hash);
      expect(verdict(second.verdicts, 'ApiKey', 'loop')).toMatchObject({ reason: 'SecretNotAllowed' });
      // Before the snapshot exists, it is not generated into either.
      expect(plan(world(objects)).generate).toEqual([]);
    });

    it("an ApiKey naming another ApiKey's generated Secret does not take that key over", () => {
      // 'aaa' sorts before 'ci': by name order it would win the duplicate and the victim's
      // requests would be served under the attacker's tenant, budget and role.
      const hijack = obj('ApiKey', 'aaa', {
        tenantRef: { name: 'acme' },
        secretRef: { name: 'ci-key' },
        disabled: true,
      });
      const p = plan(world([...healthy().slice(0, 2), victim, hijack], baseSecrets, [['ci-key', victimUid]]));
      expect(verdict(p.verdicts, 'ApiKey', 'aaa')).toMatchObject({
        ready: false,
        reason: 'SecretNotAllowed',
      });
      expect(verdict(p.verdicts, 'ApiKey', 'ci')).toMatchObject({ ready: true, reason: 'Published' });
      // Its owner still reads it.
      expect(p.manifests.filter((m) => m.kind === 'ApiKey').map((m) => m.metadata.name)).toEqual(['ci']);
    });

    describe('a key Secret its user made (not generated)', () => {
      const at = (o: ObservedObject, second: number, uid = o.metadata.uid): ObservedObject => ({
        ...o,
        metadata: {
          ...o.metadata,
          uid,
          creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
        },
      });
      const hijack = (second: number, uid?: string) =>
        at(
          obj('ApiKey', 'aaa', {
            tenantRef: { name: 'acme' },
            secretRef: { name: 'ci-key' },
            disabled: true,
          }),
          second,
          uid,
        );

      it('the older ApiKey keeps the key; a newer one naming it (sorting first) is DuplicateKey', () => {
        const p = plan(world([...healthy().slice(0, 2), at(victim, 1), hijack(2)]));
        expect(verdict(p.verdicts, 'ApiKey', 'ci')).toMatchObject({ ready: true, reason: 'Published' });
        expect(verdict(p.verdicts, 'ApiKey', 'aaa')).toMatchObject({
          ready: false,
          reason: 'DuplicateKey',
          message: 'the same key is already used by an older ApiKey',
        });
        expect(p.manifests.filter((m) => m.kind === 'ApiKey').map((m) => m.metadata.name)).toEqual(['ci']);
        // By age, not by name: created first, 'aaa' would keep it.
        const older = plan(world([...healthy().slice(0, 2), at(victim, 3), hijack(2)]));
        expect(verdict(older.verdicts, 'ApiKey', 'ci')).toMatchObject({ reason: 'DuplicateKey' });
        // In the same second, the lower uid.
        const tie = plan(world([...healthy().slice(0, 2), at(victim, 1, 'uid-b'), hijack(1, 'uid-a')]));
        expect(verdict(tie.verdicts, 'ApiKey', 'ci')).toMatchObject({ reason: 'DuplicateKey' });
      });

      it('must be labelled gantry.dev/credentials=apikey: unlabelled, the ApiKey is SecretNotLabelled and nothing of it is read', () => {
        const p = plan(world(healthy(), baseSecrets, [], [['openai', asProvider]]));
        expect(verdict(p.verdicts, 'ApiKey', 'ci')).toMatchObject({
          ready: false,
          reason: 'SecretNotLabelled',
          message:
            "Secret ci-key is not labelled gantry.dev/credentials=apikey, so it may not serve as an ApiKey's key; if it is meant to: kubectl -n gantry label secret ci-key gantry.dev/credentials=apikey",
        });
        expect(p.manifests.some((m) => m.kind === 'ApiKey')).toBe(false);
        expect(JSON.stringify(p)).not.toContain(sha256('sk-gantry-ci'));
        // Not regenerated over either: the user's Secret exists.
        expect(p.generate).toEqual([]);
        const wrong = plan(
          world(
            healthy(),
            baseSecrets,
            [],
            [
              ['openai', asProvider],
              ['ci-key', { [CREDENTIALS_LABEL]: 'yes' }],
            ],
          ),
        );
        expect(verdict(wrong.verdicts, 'ApiKey', 'ci')?.message).toContain(
          'label secret ci-key gantry.dev/credentials=apikey --overwrite',
        );
      });

      it('the key the operator generated for this ApiKey needs no label', () => {
        const p = plan(world([...healthy().slice(0, 2), victim], baseSecrets, [['ci-key', victimUid]], []));
        expect(verdict(p.verdicts, 'ApiKey', 'ci')).toMatchObject({ ready: true, reason: 'Published' });
      });

      it('an ApiKey cannot test keyHash guesses against an unlabelled Secret (the Redis password)', () => {
        const guess = (name: string, value: string, second: number) =>
          at(obj('ApiKey', name, { tenantRef: { name: 'acme' }, keyHash: sha256(value) }), second);
        const probe = at(
          obj('ApiKey', 'probe', {
            tenantRef: { name: 'acme' },
            secretRef: { name: 'redis', key: 'password' },
          }),
          9,
        );
        const p = plan(
          world(
            [...healthy(), guess('g1', 'letmein', 1), guess('g2', 'redis-pw', 2), probe],
            [...baseSecrets, ['redis', { password: 'redis-pw' }]],
            [],
            [
              ['openai', asProvider],
              ['ci-key', asKey],
            ],
          ),
        );
        expect(verdict(p.verdicts, 'ApiKey', 'probe')).toMatchObject({
          ready: false,
          reason: 'SecretNotLabelled',
        });
        expect(verdict(p.verdicts, 'ApiKey', 'g2')).toMatchObject({ ready: true });
        expect(JSON.stringify(p.verdicts)).not.toContain('DuplicateKey');
      });

      it('DuplicateKey never names the older ApiKey, whichever tenant the newer one claims', () => {
        // The review's probe: a keyHash guess written with the victim's tenantRef.
        const probe = at(
          obj('ApiKey', 'probe', { tenantRef: { name: 'acme' }, keyHash: sha256('sk-gantry-ci') }),
          2,
        );
        const same = plan(world([...healthy().slice(0, 2), at(victim, 1), probe]));
        expect(verdict(same.verdicts, 'ApiKey', 'probe')).toMatchObject({
          reason: 'DuplicateKey',
          message: 'the same key is already used by an older ApiKey',
        });
      });

      it('across tenants too', () => {
        const rival = at(
          obj('ApiKey', 'zzz', { tenantRef: { name: 'other' }, secretRef: { name: 'ci-key' } }),
          2,
        );
        const p = plan(world([...healthy().slice(0, 2), tenant('other', ['*']), at(victim, 1), rival]));
        expect(verdict(p.verdicts, 'ApiKey', 'zzz')).toMatchObject({
          reason: 'DuplicateKey',
          message: 'the same key is already used by an older ApiKey',
        });
      });

      it("a ModelDeployment naming an ApiKey's key is SecretNotAllowed, and so is another key of that Secret", () => {
        const thief = deployment('thief', 'steal', {
          baseUrl: 'http://attacker.example/v1',
          credentialsSecretRef: { name: 'ci-key', key: 'key' },
        });
        const neighbour = deployment('neighbour', 'gpt-x', {
          credentialsSecretRef: { name: 'ci-key', key: 'upstream' },
        });
        const p = plan(
          world(
            [deployment('gpt-a', 'gpt-4o-mini'), tenant('acme', ['*']), victim, thief, neighbour],
            [
              ['openai', { apiKey: 'sk-upstream' }],
              ['ci-key', { key: 'sk-gantry-ci', upstream: 'sk-up-2' }],
            ],
          ),
        );
        expect(verdict(p.verdicts, 'ModelDeployment', 'thief')).toMatchObject({
          ready: false,
          reason: 'SecretNotAllowed',
          message: "key key of Secret ci-key is ApiKey ci's key; spec.credentialsSecretRef may not name it",
        });
        expect(Object.values(p.credentials)).not.toContain('sk-gantry-ci');
        // Labelled apikey, none of the Secret serves a provider, whichever key.
        expect(verdict(p.verdicts, 'ModelDeployment', 'neighbour')).toMatchObject({
          reason: 'SecretNotAllowed',
        });
        expect(p.credentials.neighbour).toBeUndefined();
        expect(verdict(p.verdicts, 'ApiKey', 'ci')).toMatchObject({ ready: true });
      });
    });

    it.each([
      ['a Secret name the apiserver refuses', { name: 'Team_A' }, '/spec/secretRef/name: must match pattern'],
      [
        'a data key the apiserver refuses',
        { name: 'team-a', key: 'a/b' },
        '/spec/secretRef/key: must match pattern',
      ],
      ['an empty data key', { name: 'team-a', key: '' }, '/spec/secretRef/key: must match pattern'],
      // The apiserver refuses these too; a looser pattern let them through to a failing generate.
      ['an empty label in the name', { name: 'a..b' }, '/spec/secretRef/name: must match pattern'],
      ['a label ending in a dash', { name: 'a-.b' }, '/spec/secretRef/name: must match pattern'],
      ['a label starting with a dash', { name: 'a.-b' }, '/spec/secretRef/name: must match pattern'],
      ['the data key "."', { name: 'team-a', key: '.' }, '/spec/secretRef/key: must match pattern'],
      ['the data key ".."', { name: 'team-a', key: '..' }, '/spec/secretRef/key: must match pattern'],
      [
        'a data key starting with ".."',
        { name: 'team-a', key: '..x' },
        '/spec/secretRef/key: must match pattern',
      ],
    ])(
      'an ApiKey with %s is InvalidSpec, not a key generation that fails every reconcile',
      (_, secretRef, field) => {
        const bad = obj('ApiKey', 'bad', { tenantRef: { name: 'acme' }, secretRef });
        const p = plan(world([...healthy(), bad]));
        expect(p.generate).toEqual([]);
        const v = verdict(p.verdicts, 'ApiKey', 'bad');
        expect(v).toMatchObject({ ready: false, reason: 'InvalidSpec' });
        expect(v?.message).toContain(field);
      },
    );
  });

  it.each([{ name: 'a.b-c.d' }, { name: 'team-a', key: '.dockerconfigjson' }, { name: 'x', key: 'tls.crt' }])(
    'a Secret reference the apiserver accepts (%o) is generated',
    (secretRef) => {
      const fresh = obj('ApiKey', 'fresh', { tenantRef: { name: 'acme' }, secretRef });
      const p = plan(world([...healthy(), fresh]));
      expect(p.generate.map((g) => [g.secretName, g.dataKey])).toEqual([
        [secretRef.name, secretRef.key ?? 'key'],
      ]);
    },
  );

  it('a refused key generation marks only that ApiKey KeyGenerationFailed, with a clipped message', () => {
    const objects = [
      ...healthy(),
      apiKey('fresh', 'acme', 'fresh-key'),
      apiKey('other', 'acme', 'other-key'),
    ];
    const p = plan(world(objects));
    const verdicts = withGenerationFailures(p.verdicts, new Map([['fresh', `403 ${'x'.repeat(5000)}`]]));
    expect(verdict(verdicts, 'ApiKey', 'fresh')).toMatchObject({
      ready: false,
      reason: 'KeyGenerationFailed',
    });
    expect(verdict(verdicts, 'ApiKey', 'fresh')?.message).toMatch(/^could not create the key Secret: 403 x+/);
    expect(verdict(verdicts, 'ApiKey', 'fresh')?.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(verdict(verdicts, 'ApiKey', 'other')).toMatchObject({ reason: 'KeyPending' });
    expect(verdict(verdicts, 'ApiKey', 'ci')).toMatchObject({ ready: true, reason: 'Published' });
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

  describe('a snapshot too large for its Secret', () => {
    // Hex names barely compress: 8,000 of them make a tenant of ~290 KB gzipped (~540 KB as JSON),
    // each well under what the apiserver stores; three fit a Secret, four do not. Each is over
    // the per-object cap, which is raised here: these test the selection among big objects.
    const roomy = (...args: Parameters<typeof world>): World => ({
      ...world(...args),
      maxObjectBytes: 8 * 1024 * 1024,
    });
    const names = (t: string) =>
      Array.from({ length: 8000 }, (_, i) => createHash('sha256').update(`${t}-${i}`).digest('hex'));
    let clock = 0;
    const aged = (o: ObservedObject): ObservedObject => ({
      ...o,
      metadata: {
        ...o.metadata,
        creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, ++clock)).toISOString(),
      },
    });
    const leakedSecret: [string, Record<string, string>] = ['leaked-key', { key: 'sk-leaked' }];
    const leaked = (extra: object = {}) =>
      aged(
        obj('ApiKey', 'leaked', { tenantRef: { name: 'acme' }, secretRef: { name: 'leaked-key' }, ...extra }),
      );
    const base = [...healthy().map(aged), ...['t1', 't2', 't3'].map((t) => aged(tenant(t, names(t))))];
    const big = aged(tenant('t4', names('t4')));
    const leakedKey = leaked();
    const secrets = [...baseSecrets, leakedSecret];
    const publishedBefore = plan(roomy([...base, leakedKey], secrets));
    const over = (objects: ObservedObject[], published = publishedBefore) =>
      plan({ ...roomy(objects, secrets), published: () => published });
    const listed = (p: { manifests: { kind: string; metadata: { name: string } }[] }) =>
      p.manifests.map((m) => `${m.kind}/${m.metadata.name}`);

    it('is measured gzipped, as published: three big tenants fit where the plain JSON would not', () => {
      expect(publishedBefore.tooLarge).toBeUndefined();
      expect(Buffer.byteLength(snapshotText(publishedBefore, 1))).toBeGreaterThan(MAX_SNAPSHOT_BYTES);
      expect(sizeAgainstLimit(publishedBefore)).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
      expect(packSnapshot(snapshotText(publishedBefore, Number.MAX_SAFE_INTEGER)).length).toBeLessThanOrEqual(
        MAX_SNAPSHOT_BYTES,
      );
    });

    it('only the object that does not fit is SnapshotTooLarge; the rest stays published, newer small ones too', () => {
      const newcomer = aged(tenant('newcomer', ['gpt-4o-mini']));
      const p = over([...base, leakedKey, big, newcomer]);
      expect(p.tooLarge?.leftOut).toBe(1);
      expect(p.tooLarge!.bytes).toBeGreaterThan(MAX_SNAPSHOT_BYTES);
      expect(listed(p)).toEqual([...listed(publishedBefore), 'Tenant/newcomer'].sort());
      expect(sizeAgainstLimit(p)).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
      expect(verdict(p.verdicts, 'Tenant', 't4')).toMatchObject({ ready: false, reason: 'SnapshotTooLarge' });
      expect(verdict(p.verdicts, 'Tenant', 't4')?.message).toBe(
        'the snapshot would be over the 1048512 bytes a Secret holds (gzipped); this object is not served until older objects make room',
      );
      for (const v of p.verdicts.filter((x) => x.name !== 't4' && !x.name.startsWith('t')))
        expect(v).toMatchObject({ ready: true, reason: 'Published' });
      // What is published compiles on a pod.
      expect(compilePublished(snapshotText(p, 2), { env: {}, source: 't' }).ok).toBe(true);
      // Nothing in the message moves with the size: another edit does not re-patch every status.
      const bigger = over([...base, leakedKey, aged(tenant('t4', [...names('t4'), 'one-more'])), newcomer]);
      expect(verdict(bigger.verdicts, 'Tenant', 't4')?.message).toBe(
        verdict(p.verdicts, 'Tenant', 't4')?.message,
      );
    });

    it('revoking a key still publishes while over the limit: disabled, deleted, or its Secret gone', () => {
      const disabled = over([...base, leaked({ disabled: true }), big]);
      const key = disabled.manifests.find((m) => m.metadata.name === 'leaked');
      expect(key?.spec).toMatchObject({ disabled: true });
      expect(disabled.hash).not.toBe(publishedBefore.hash);
      expect(verdict(disabled.verdicts, 'Tenant', 't4')).toMatchObject({ reason: 'SnapshotTooLarge' });
      const deleted = over([...base, big]);
      expect(listed(deleted)).not.toContain('ApiKey/leaked');
      expect(listed(deleted)).toContain('ApiKey/ci');
      const secretGone = plan({ ...roomy([...base, leakedKey, big]), published: () => publishedBefore });
      expect(listed(secretGone)).not.toContain('ApiKey/leaked');
    });

    it("a change that does not fit keeps the object's previous version serving", () => {
      const grown = aged(tenant('t1', [...names('t1'), ...names('t1-more')]));
      const p = over([...base.filter((o) => o.metadata.name !== 't1'), grown, leakedKey]);
      expect(verdict(p.verdicts, 'Tenant', 't1')).toMatchObject({ ready: false, reason: 'SnapshotTooLarge' });
      expect(verdict(p.verdicts, 'Tenant', 't1')?.message).toContain('its previous version keeps serving');
      expect(p.hash).toBe(publishedBefore.hash);
    });

    it('with nothing published before, the oldest objects that fit are published', () => {
      const p = plan({ ...roomy([...base, leakedKey, big], secrets), published: undefined });
      expect(listed(p)).toEqual(listed(publishedBefore));
      expect(verdict(p.verdicts, 'Tenant', 't4')).toMatchObject({ reason: 'SnapshotTooLarge' });
    });
  });

  it('condition messages are clipped, however many models a tenant lists that nobody serves', () => {
    const ghosts = Array.from({ length: 500 }, (_, i) => `ghost-${i}`);
    const p = plan(world([deployment('gpt-a', 'gpt-4o-mini'), tenant('wide', ['gpt-4o-mini', ...ghosts])]));
    const v = verdict(p.verdicts, 'Tenant', 'wide')!;
    expect(v).toMatchObject({ ready: false, reason: 'ModelNotFound' });
    expect(v.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(v.message).toMatch(
      /^no ModelDeployment serves ghost-0, ghost-1, .* \.\.\. \(\d+ more characters\)$/,
    );
    expect(p.manifests.some((m) => m.metadata.name === 'wide')).toBe(true);
  });

  it('a clipped message never ends in half a surrogate pair, so it is stored as computed', () => {
    // Whatever the pad, some cut lands between the two halves of an emoji.
    for (let pad = 1; pad <= 4; pad++) {
      const models = ['x'.repeat(pad), ...Array.from({ length: 600 }, (_, i) => `🚀🚀${i + 1}`)];
      const p = plan(world([deployment('gpt-a', 'gpt-4o-mini'), tenant('wide', ['gpt-4o-mini', ...models])]));
      const message = verdict(p.verdicts, 'Tenant', 'wide')!.message;
      expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
      // UTF-8 (what the apiserver stores) round-trips only a well-formed string.
      expect(Buffer.from(message, 'utf8').toString('utf8')).toBe(message);
    }
  });

  it('credentials of a left-out deployment are not published', () => {
    const p = plan(world([...healthy(), deployment('gpt-b', 'gpt-4o', { fallbacks: ['ghost'] })]));
    expect(Object.keys(p.credentials)).toEqual(['gpt-a']);
  });
});
