import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  packSnapshot,
  PUBLISHED_DATA_KEY,
  PUBLISHED_GZIP_KEY,
  publishedText,
} from '@gantry/dataplane/config/published';
import { sharedValidators, type Manifest } from '@gantry/crds';
import {
  MAX_SNAPSHOT_BYTES,
  publication,
  readPublished,
  sizeAgainstLimit,
  snapshotSecretData,
  snapshotText,
} from './publication.ts';

const decodedBytes = (data: Record<string, string>): number =>
  Object.values(data).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0);

/** Text gzip shrinks by a quarter at most (random base64), of `bytes` bytes. */
const incompressible = (bytes: number): string =>
  JSON.stringify({ pad: randomBytes(bytes).toString('base64').slice(0, bytes) });

describe('snapshotSecretData', () => {
  it('writes the plain form beside the gzipped one while both fit, for pods of the release before gzip', () => {
    const text = JSON.stringify({ manifests: [], hello: 'world' });
    const data = snapshotSecretData(text);
    expect(Object.keys(data).sort()).toEqual([PUBLISHED_DATA_KEY, PUBLISHED_GZIP_KEY].sort());
    expect(Buffer.from(data[PUBLISHED_DATA_KEY]!, 'base64').toString('utf8')).toBe(text);
    // New pods read the gzipped form, old ones the plain one: the same text either way.
    expect(publishedText(data)).toEqual({ ok: true, text });
    expect(publishedText({ [PUBLISHED_DATA_KEY]: data[PUBLISHED_DATA_KEY]! })).toEqual({ ok: true, text });
  });

  it('writes only the gzipped form once both would not fit, and never more than a Secret holds', () => {
    const text = incompressible(700 * 1024);
    const data = snapshotSecretData(text);
    expect(Object.keys(data)).toEqual([PUBLISHED_GZIP_KEY]);
    expect(publishedText(data)).toEqual({ ok: true, text });
    expect(decodedBytes(data)).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
  });

  it('keeps both forms within the limit at the boundary', () => {
    for (const bytes of [300 * 1024, 400 * 1024, 520 * 1024, 600 * 1024]) {
      const data = snapshotSecretData(incompressible(bytes));
      expect(decodedBytes(data)).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
    }
  });
});

describe('readPublished', () => {
  const gpt = {
    apiVersion: 'gantry.dev/v1alpha1',
    kind: 'ModelDeployment',
    metadata: { name: 'gpt-a', namespace: 'gantry' },
    spec: {
      model: 'gpt-4o-mini',
      provider: 'openai',
      upstreamModel: 'gpt-4o-mini',
      baseUrl: 'http://127.0.0.1:1/v1',
    },
  } as Manifest;
  // As plan publishes it: validated, so with the schema's defaults filled in.
  sharedValidators().ModelDeployment(gpt);
  const p = publication([{ key: 'ModelDeployment/gpt-a', manifest: gpt, credential: 'sk-up' }]);

  it('reads back what was published, with its content hash', () => {
    expect(readPublished(snapshotSecretData(snapshotText(p, 4)))).toEqual({
      manifests: p.manifests,
      credentials: { 'gpt-a': 'sk-up' },
      hash: p.hash,
    });
  });

  it('rejects what a pod would reject, so it never becomes the base of a plan', () => {
    const doc = JSON.parse(snapshotText(p, 4)) as Record<string, unknown>;
    const secret = (d: object) => snapshotSecretData(JSON.stringify(d));
    expect(readPublished(secret({ ...doc, format: 'other' }))).toBeUndefined();
    expect(readPublished(secret({ ...doc, credentials: { 'gpt-a': 5 } }))).toBeUndefined();
    expect(readPublished({ other: 'eA==' })).toBeUndefined();
  });

  it("keeps the manifests that pass today's schema when one does not, and only their credentials", () => {
    const tenant = {
      apiVersion: 'gantry.dev/v1alpha1',
      kind: 'Tenant',
      metadata: { name: 't', namespace: 'gantry' },
      spec: { tier: 'pro', models: ['gpt-4o-mini'] },
    } as Manifest;
    sharedValidators().Tenant(tenant);
    const both = publication([
      { key: 'ModelDeployment/gpt-a', manifest: gpt, credential: 'sk-up' },
      { key: 'Tenant/t', manifest: tenant },
    ]);
    const doc = JSON.parse(snapshotText(both, 4)) as { manifests: object[] };
    const secret = (manifests: object[]) => snapshotSecretData(JSON.stringify({ ...doc, manifests }));
    const badTenant = { ...tenant, spec: { tier: 'nope', models: [] } };
    const kept = readPublished(secret([gpt, badTenant]));
    expect(kept?.manifests).toEqual([gpt]);
    expect(kept?.credentials).toEqual({ 'gpt-a': 'sk-up' });
    expect(kept?.hash).toBe(p.hash);
    const badGpt = { ...gpt, spec: { model: 'x' } };
    expect(readPublished(secret([badGpt, tenant]))).toMatchObject({ manifests: [tenant], credentials: {} });
    expect(readPublished(secret([{ kind: 'Nope', metadata: { name: 'x' } }, tenant]))?.manifests).toEqual([
      tenant,
    ]);
  });
});

describe('sizeAgainstLimit', () => {
  const tenant = (models: string[]) =>
    publication([
      {
        key: 'Tenant/t',
        manifest: {
          apiVersion: 'gantry.dev/v1alpha1',
          kind: 'Tenant',
          metadata: { name: 't', namespace: 'gantry' },
          spec: { tier: 'pro', models },
        } as Manifest,
      },
    ]);
  const text = (p: ReturnType<typeof publication>) => snapshotText(p, Number.MAX_SAFE_INTEGER);

  it('is the gzipped size whenever it is over the limit', () => {
    const p = tenant(Array.from({ length: 40_000 }, () => randomBytes(32).toString('hex')));
    expect(sizeAgainstLimit(p)).toBeGreaterThan(MAX_SNAPSHOT_BYTES);
    expect(sizeAgainstLimit(p)).toBe(packSnapshot(text(p)).length);
  });

  it('is the plain length where even the worst gzip fits: the same verdict, no gzip', () => {
    const p = tenant(['gpt-4o-mini']);
    expect(sizeAgainstLimit(p)).toBe(Buffer.byteLength(text(p)));
    expect(packSnapshot(text(p)).length).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
  });
});
