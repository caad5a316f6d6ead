import { describe, expect, it } from 'vitest';
import { compactionSealKey } from '../formats/responses/compaction.ts';
import { compactionSecretFromEnv, MIN_COMPACTION_SECRET_CHARS } from './compaction-secret.ts';

const owner = { tenant: 'acme', keyId: 'ns/key', keyHash: 'ab'.repeat(32) };

describe('the compaction secret', () => {
  it('is optional; when set it must be long enough to resist offline guessing', () => {
    expect(compactionSecretFromEnv({})).toBeUndefined();
    expect(compactionSecretFromEnv({ GANTRY_COMPACTION_SECRET: '  ' })).toBeUndefined();
    expect(() => compactionSecretFromEnv({ GANTRY_COMPACTION_SECRET: 'short' })).toThrow(
      /GANTRY_COMPACTION_SECRET/,
    );
    const ok = 'x'.repeat(MIN_COMPACTION_SECRET_CHARS);
    expect(compactionSecretFromEnv({ GANTRY_COMPACTION_SECRET: ok })?.toString()).toBe(ok);
  });

  it('without it the seal key is the key hash (as before); with it, bound to tenant, key id and key hash', () => {
    expect(compactionSealKey(owner, undefined)).toBe(owner.keyHash);
    const secret = Buffer.from('s'.repeat(40));
    const key = compactionSealKey(owner, secret);
    expect(key).not.toBe(owner.keyHash);
    expect(compactionSealKey(owner, Buffer.from('t'.repeat(40)))).not.toBe(key);
    expect(compactionSealKey({ ...owner, tenant: 'other' }, secret)).not.toBe(key);
    expect(compactionSealKey({ ...owner, keyId: 'ns/other' }, secret)).not.toBe(key);
    // Rotating the key's secret changes its hash: its compaction items no longer verify.
    expect(compactionSealKey({ ...owner, keyHash: 'cd'.repeat(32) }, secret)).not.toBe(key);
  });
});
