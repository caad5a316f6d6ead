import { describe, expect, it } from 'vitest';
import { MemoryClientSecretStore } from './memory.ts';
import type { ClientSecret } from './types.ts';

const NOW = 1_000_000;
const secret = (tenant: string, keyId: string, instructions = 'be brief'): ClientSecret => ({
  tenant,
  keyId,
  keyHash: `hash-of-${keyId}`,
  model: 'gpt-rt',
  session: { instructions },
  expiresAt: NOW + 600_000,
});

describe('MemoryClientSecretStore bounds', () => {
  it("one tenant minting through many keys past the bound evicts its own oldest secrets, never another tenant's", async () => {
    const store = new MemoryClientSecretStore({ maxSecrets: 20, clock: () => NOW });
    for (const h of ['b1', 'b2', 'b3'])
      expect(await store.put(h, secret('globex', 'default/g'), 10)).toBe(true);
    // 50 keys of one tenant, each within the per-key cap, together far past the store's bound.
    for (let k = 0; k < 50; k++)
      for (let i = 0; i < 10; i++)
        expect(await store.put(`a-${k}-${i}`, secret('acme', `default/k${k}`), 10)).toBe(true);
    for (const h of ['b1', 'b2', 'b3']) expect((await store.get(h))?.tenant).toBe('globex');
    // The flooder keeps the rest of the bound: its newest 17 secrets.
    expect((await store.get('a-49-9'))?.keyId).toBe('default/k49');
    expect((await store.get('a-48-3'))?.keyId).toBe('default/k48');
    expect(await store.get('a-48-2')).toBeUndefined();
    expect(await store.get('a-0-0')).toBeUndefined();
  });

  it('the size bound is fair too: one tenant of long sessions cannot push out a short one', async () => {
    const store = new MemoryClientSecretStore({ maxChars: 20_000, clock: () => NOW });
    expect(await store.put('small', secret('globex', 'default/g'), 100)).toBe(true);
    for (let i = 0; i < 30; i++)
      await store.put(`big-${i}`, secret('acme', 'default/k', 'x'.repeat(2_000)), 100);
    expect((await store.get('small'))?.session).toEqual({ instructions: 'be brief' });
    expect(await store.get('big-29')).toBeDefined();
    expect(await store.get('big-0')).toBeUndefined();
  });

  it('an evicted secret no longer counts against its key: the key may mint again', async () => {
    const store = new MemoryClientSecretStore({ maxSecrets: 4, clock: () => NOW });
    expect(await store.put('k1', secret('acme', 'default/k'), 2)).toBe(true);
    expect(await store.put('k2', secret('acme', 'default/k'), 2)).toBe(true);
    expect(await store.put('k3', secret('acme', 'default/k'), 2)).toBe(false);
    for (let i = 0; i < 4; i++) await store.put(`o-${i}`, secret('acme', `default/o${i}`), 2);
    expect(await store.get('k1')).toBeUndefined();
    expect(await store.put('k3', secret('acme', 'default/k'), 2)).toBe(true);
  });

  it('hands out copies: editing a secret read back changes nothing stored', async () => {
    const store = new MemoryClientSecretStore({ clock: () => NOW });
    await store.put('h', secret('acme', 'default/k'), 10);
    const read = await store.get('h');
    read!.session.instructions = 'be rude';
    expect((await store.get('h'))?.session).toEqual({ instructions: 'be brief' });
  });
});
