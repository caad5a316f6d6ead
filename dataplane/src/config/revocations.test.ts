import { describe, expect, it } from 'vitest';
import { compile, type LocatedManifest } from './compile.ts';
import { parseManifests } from './load.ts';
import { keyStatements, revokedKeys, withoutKeys } from './revocations.ts';
import type { Snapshot } from './snapshot.ts';
import { ConfigStore } from './store.ts';

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const HASH_C = 'c'.repeat(64);

const doc = (kind: string, name: string, spec: Record<string, unknown>, namespace?: string): string =>
  `---\n${JSON.stringify({
    apiVersion: 'gantry.dev/v1alpha1',
    kind,
    metadata: namespace ? { name, namespace } : { name },
    spec,
  })}\n`;
const tenant = doc('Tenant', 'dev', { models: ['*'] });
const model = doc('ModelDeployment', 'gpt', { model: 'gpt', provider: 'openai', upstreamModel: 'gpt' });
const key = (name: string, keyHash: string, extra: Record<string, unknown> = {}, namespace?: string) =>
  doc('ApiKey', name, { tenantRef: { name: 'dev' }, keyHash, ...extra }, namespace);

function snapshotOf(text: string, version = 1): Snapshot {
  const { items, errors } = parseManifests(text, 'gantry.yaml');
  expect(errors).toEqual([]);
  const result = compile(items as LocatedManifest[], { env: { OPENAI_API_KEY: 'x' }, version, source: 'f' });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.snapshot;
}

const serving = snapshotOf(
  tenant + model + key('alice', HASH_A) + key('bob', HASH_B) + key('carol', HASH_C, {}, 'team'),
);
/** An unrelated error in the same file: a tenant that references a missing policy. */
const unrelatedError = doc('Tenant', 'broken', { guardrails: { policyRef: { name: 'missing' } } });

describe('revocations from a rejected file', () => {
  it('disabled: true revokes that key only', () => {
    const text =
      tenant + model + key('alice', HASH_A, { disabled: true }) + key('bob', HASH_B) + unrelatedError;
    expect(revokedKeys(serving, keyStatements(text))).toEqual([HASH_A]);
  });

  it('a changed keyHash revokes the old key (the new one waits for a valid file)', () => {
    const text = key('bob', 'd'.repeat(64)) + unrelatedError;
    expect(revokedKeys(serving, keyStatements(text))).toEqual([HASH_B]);
  });

  it('the namespace is part of the identity', () => {
    expect(revokedKeys(serving, keyStatements(key('carol', HASH_C, { disabled: true })))).toEqual([]);
    expect(revokedKeys(serving, keyStatements(key('carol', HASH_C, { disabled: true }, 'team')))).toEqual([
      HASH_C,
    ]);
  });

  it('a deleted document revokes nothing: a file cut short looks the same', () => {
    expect(revokedKeys(serving, keyStatements(tenant + unrelatedError))).toEqual([]);
    expect(revokedKeys(serving, keyStatements(''))).toEqual([]);
  });

  it('an ApiKey document that is itself invalid says nothing (its intent is unknown)', () => {
    const invalid = doc('ApiKey', 'alice', { tenantRef: { name: 'dev' }, keyHash: HASH_A, disabled: 'yes' });
    const broken = doc('ApiKey', 'bob', { keyHash: 'not-hex', disabled: true });
    expect(revokedKeys(serving, keyStatements(invalid + broken))).toEqual([]);
  });

  it('YAML that does not parse says nothing, and does not throw', () => {
    expect(revokedKeys(serving, keyStatements('kind: ApiKey\n  bad: [indent\n'))).toEqual([]);
    expect(keyStatements('a: *nope\n').size).toBe(0);
  });

  it('an unchanged key document is not a revocation', () => {
    expect(revokedKeys(serving, keyStatements(key('alice', HASH_A) + unrelatedError))).toEqual([]);
  });

  it('withoutKeys drops exactly those keys into a new version and leaves the rest shared', () => {
    const next = withoutKeys(serving, [HASH_A], 2);
    expect(next.version).toBe(2);
    expect([...next.keys.keys()].sort()).toEqual([HASH_B, HASH_C]);
    expect(next.models).toBe(serving.models);
    expect(serving.keys.has(HASH_A)).toBe(true);
  });
});

describe('ConfigStore status', () => {
  it('reports a rejection until a file loads, keeping the first rejection time and the revoked keys', () => {
    const store = new ConfigStore(serving, 'sha-1');
    expect(store.status()).toMatchObject({ status: 'ok', version: 1, sha256: 'sha-1' });

    const first = store.apply({
      ok: false,
      errors: ['bad 1'],
      sha256: 'sha-2',
      keyStatements: keyStatements(key('alice', HASH_A, { disabled: true })),
    });
    expect(first).toEqual({ ok: false, errors: ['bad 1'], version: 2, revoked: ['default/alice'] });
    expect(store.current().keys.has(HASH_A)).toBe(false);
    const rejected = store.status();
    expect(rejected).toMatchObject({
      status: 'rejected',
      version: 2,
      sha256: 'sha-1',
      rejectedSha256: 'sha-2',
      reason: ['bad 1'],
      revokedKeys: ['default/alice'],
    });

    const second = store.apply({ ok: false, errors: ['bad 2'], sha256: 'sha-3' });
    expect(second).toEqual({ ok: false, errors: ['bad 2'], version: 2, revoked: [] });
    const still = store.status();
    expect(still).toMatchObject({ status: 'rejected', reason: ['bad 2'], revokedKeys: ['default/alice'] });
    expect(still.status === 'rejected' && rejected.status === 'rejected' && still.since).toBe(
      rejected.status === 'rejected' && rejected.since,
    );

    store.apply({
      ok: true,
      snapshot: snapshotOf(tenant + model + key('bob', HASH_B), 3),
      warnings: [],
      sha256: 'sha-4',
    });
    expect(store.status()).toMatchObject({ status: 'ok', version: 3, sha256: 'sha-4' });
  });
});
