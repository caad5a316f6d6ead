/**
 * The per-object cap: one object over it is left out with its reason, and no longer takes the
 * room of everyone else's.
 */
import { createHash } from 'node:crypto';
import type { KindName, Manifest } from '@gantry/crds';
import { describe, expect, it } from 'vitest';
import type { ObservedObject, World } from '../world.ts';
import { MAX_OBJECT_BYTES, objectTooLarge, publishedBytes } from './object-size.ts';
import { CREDENTIALS_LABEL, plan, type Plan } from './plan.ts';

let clock = 0;
const obj = (kind: KindName, name: string, spec: object): ObservedObject => ({
  kind,
  metadata: {
    name,
    namespace: 'gantry',
    uid: `uid-${name}`,
    generation: 1,
    creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, ++clock)).toISOString(),
  },
  spec,
});
/** Hex model names barely compress: 3,500 make a tenant of ~235 KB (~126 KB gzipped), under the cap. */
const names = (t: string, n: number) =>
  Array.from({ length: n }, (_, i) => createHash('sha256').update(`${t}-${i}`).digest('hex'));
const tenant = (name: string, models: string[]) => obj('Tenant', name, { tier: 'pro', models });
const gpt = obj('ModelDeployment', 'gpt', {
  model: 'gpt-4o-mini',
  provider: 'openai',
  upstreamModel: 'gpt-4o-mini',
  baseUrl: 'http://127.0.0.1:1/v1',
  credentialsSecretRef: { name: 'openai', key: 'apiKey' },
});
const acme = tenant('acme', ['gpt-4o-mini']);
const ci = obj('ApiKey', 'ci', { tenantRef: { name: 'acme' }, secretRef: { name: 'ci-key' } });
const world = (objects: ObservedObject[], apiKey = 'sk-1', before?: Plan): World => ({
  namespace: 'gantry',
  objects,
  secrets: new Map<string, Record<string, string>>([
    ['openai', { apiKey }],
    ['ci-key', { key: 'gk-ci' }],
  ]),
  secretLabels: new Map([
    ['openai', { [CREDENTIALS_LABEL]: 'provider' }],
    ['ci-key', { [CREDENTIALS_LABEL]: 'apikey' }],
  ]),
  snapshotSecret: 'gantry-snapshot',
  generatedKeys: new Map(),
  published: before && (() => before),
});
const verdict = (p: Plan, kind: KindName, name: string) =>
  p.verdicts.find((v) => v.kind === kind && v.name === name);
const published = (p: Plan, name: string) => p.manifests.find((m) => m.metadata.name === name);
/** Published as it is now (a tenant of made-up model names is ModelNotFound, and served). */
const served = (p: Plan, name: string) =>
  published(p, name) !== undefined && verdict(p, 'Tenant', name)?.reason === 'ModelNotFound';

describe('objectTooLarge', () => {
  const m = {
    apiVersion: 'gantry.dev/v1alpha1',
    kind: 'Tenant',
    metadata: { name: 'é', namespace: 'gantry' },
    spec: { models: ['ü'.repeat(100)] },
  } as Manifest;
  const bytes = publishedBytes(m, undefined);

  it('counts UTF-8 bytes, the credential included, and allows exactly the cap', () => {
    expect(bytes).toBe(Buffer.byteLength(JSON.stringify(m)));
    expect(bytes).toBeGreaterThan(JSON.stringify(m).length);
    expect(objectTooLarge(m, undefined, bytes)).toBeUndefined();
    expect(objectTooLarge(m, undefined, bytes - 1)).toBe(
      `its manifest would take ${bytes} bytes of the snapshot (plain JSON), over the ${bytes - 1} bytes one object may take; it is not served (nor its previous version) until it is smaller`,
    );
    // As the snapshot stores it: a JSON string, quotes included.
    expect(publishedBytes(m, 'sk-€')).toBe(bytes + 8);
    expect(objectTooLarge(m, 'sk-€', bytes + 7)).toMatch(/^its manifest and provider credential would take/);
  });

  it('measures a credential JSON-escaped, as the snapshot stores it', () => {
    // Raw, 1 byte each; escaped, \u0001 is 6: measured raw, this passed at 6 times the cap.
    const control = '\u0001'.repeat(1000);
    expect(publishedBytes(m, control)).toBe(bytes + 6002);
    expect(objectTooLarge(m, control, bytes + 6001)).toBeDefined();
    expect(objectTooLarge(m, control, bytes + 6002)).toBeUndefined();
    expect(publishedBytes(m, 'a"b\\')).toBe(bytes + 8);
  });

  it('is 256 KiB by default', () => {
    expect(MAX_OBJECT_BYTES).toBe(262144);
    expect(objectTooLarge(m, 'x'.repeat(MAX_OBJECT_BYTES - bytes - 2), undefined)).toBeUndefined();
    expect(objectTooLarge(m, 'x'.repeat(MAX_OBJECT_BYTES - bytes - 1))).toBeDefined();
  });
});

describe('an object over the cap', () => {
  it('is ObjectTooLarge with its size and the cap; its keys go with it, the rest publishes', () => {
    const huge = tenant('huge', names('huge', 4000));
    const key = obj('ApiKey', 'hk', { tenantRef: { name: 'huge' }, keyHash: 'a'.repeat(64) });
    const near = tenant('near', names('near', 3800));
    const p = plan(world([gpt, acme, ci, huge, key, near]));
    expect(p.tooLarge).toBeUndefined();
    expect(verdict(p, 'Tenant', 'huge')).toMatchObject({
      ready: false,
      reason: 'ObjectTooLarge',
      message: expect.stringMatching(
        /would take 26\d{4} bytes .* over the 262144 bytes one object may take/,
      ) as unknown,
    });
    expect(published(p, 'huge')).toBeUndefined();
    expect(verdict(p, 'ApiKey', 'hk')?.reason).toBe('TenantNotFound');
    expect(served(p, 'near')).toBe(true);
    expect(verdict(p, 'ApiKey', 'ci')?.reason).toBe('Published');
  });

  it('with its provider credential: a deployment whose Secret holds a huge value', () => {
    const p = plan(world([gpt, acme, ci], 'k'.repeat(MAX_OBJECT_BYTES)));
    expect(verdict(p, 'ModelDeployment', 'gpt')).toMatchObject({ reason: 'ObjectTooLarge' });
    expect(verdict(p, 'ModelDeployment', 'gpt')?.message).toMatch(/^its manifest and provider credential/);
    expect(p.credentials).toEqual({});
  });

  it('a credential with a control character is InvalidCredential, not measured or published', () => {
    // 200 KB of control characters: 1.2 MB escaped, over the Secret's own limit.
    const p = plan(world([gpt, acme, ci], '\u0001'.repeat(200_000)));
    expect(verdict(p, 'ModelDeployment', 'gpt')).toMatchObject({
      ready: false,
      reason: 'InvalidCredential',
      message: expect.stringMatching(
        /^key apiKey of Secret openai holds a control character \(U\+0001\)/,
      ) as unknown,
    });
    expect(p.credentials).toEqual({});
    const newline = plan(world([gpt, acme, ci], 'sk-1\n'));
    expect(verdict(newline, 'ModelDeployment', 'gpt')?.message).toContain('(U+000A, at its end)');
    expect(verdict(plan(world([gpt, acme, ci], 'sk-1\u007f2')), 'ModelDeployment', 'gpt')?.reason).toBe(
      'InvalidCredential',
    );
    expect(verdict(plan(world([gpt, acme, ci], 'sk-ü€1')), 'ModelDeployment', 'gpt')?.reason).toBe(
      'Published',
    );
  });

  it('no longer pushes newer objects out of the snapshot', () => {
    // The oldest, 1.6 MB (870 KB gzipped): before the cap it was published and took the room
    // of the tenants after it (two of three SnapshotTooLarge).
    const hog = tenant('hog', names('hog', 24000));
    const rest = ['s1', 's2', 's3'].map((s) => tenant(s, names(s, 3500)));
    const p = plan(world([hog, gpt, acme, ci, ...rest]));
    expect(verdict(p, 'Tenant', 'hog')?.reason).toBe('ObjectTooLarge');
    expect(p.tooLarge).toBeUndefined();
    for (const s of ['s1', 's2', 's3']) expect(served(p, s), s).toBe(true);
  });

  it('over the snapshot limit, is not kept at its previous version', () => {
    // Eight tenants of ~126 KB gzipped fit the Secret; t1 grows past the cap, two more come.
    const ts = Array.from({ length: 8 }, (_, i) => tenant(`t${i + 1}`, names(`t${i + 1}`, 3500)));
    const before = plan(world([gpt, acme, ci, ...ts]));
    expect(before.tooLarge).toBeUndefined();
    const grown = { ...ts[0]!, spec: { tier: 'pro', models: names('t1', 4000) } };
    const more = ['t9', 't10'].map((t) => tenant(t, names(t, 3500)));
    const p = plan(world([gpt, acme, ci, grown, ...ts.slice(1), ...more], 'sk-1', before));
    expect(p.tooLarge).toBeDefined();
    // Before the cap, a models-only growth waited at its old version, which kept serving.
    expect(verdict(p, 'Tenant', 't1')?.reason).toBe('ObjectTooLarge');
    expect(published(p, 't1')).toBeUndefined();
    expect(served(p, 't9')).toBe(true);
    expect(verdict(p, 'Tenant', 't10')?.reason).toBe('SnapshotTooLarge');
  });
});
