import { describe, expect, it } from 'vitest';
import { compactionSealKey } from '../formats/responses/compaction.ts';
import { compactionSecretFromEnv, MIN_COMPACTION_SECRET_CHARS } from './compaction-secret.ts';

const owner = { tenant: 'acme', keyId: 'ns/key', keyHash: 'ab'.repeat(32) };

describe('the compaction secret', () => {
  it('is optional; when set it must be long enough to resist offline guessing', () => {
    expect(compactionSecretFromEnv({})).toBeUndefined();
    // Present but blank (a Secret rendered with an empty value): a start-up error, not the
    // silent fallback to the key-hash seal.
    for (const blank of ['', '  ', '\n'])
      expect(() => compactionSecretFromEnv({ GANTRY_COMPACTION_SECRET: blank })).toThrow(
        /GANTRY_COMPACTION_SECRET is set but empty/,
      );
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

describe('starting the gateway', () => {
  it('stops on a compaction secret that is set but blank, before reading any config', async () => {
    const { startGateway } = await import('../gateway.ts');
    await expect(
      startGateway({ configFile: '/nonexistent/gantry.yaml', env: { GANTRY_COMPACTION_SECRET: ' ' } }),
    ).rejects.toThrow(/GANTRY_COMPACTION_SECRET is set but empty/);
  });
});
