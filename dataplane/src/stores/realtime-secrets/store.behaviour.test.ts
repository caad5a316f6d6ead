/** One behavioural suite for Realtime client secrets, run against the in-process and the Redis store. */
import { afterEach, describe, expect, it } from 'vitest';
import { backends, fakeClock, type StoreFixture } from '../testing/backends.ts';
import type { ClientSecret } from './types.ts';

const secret = (expiresAt: number): ClientSecret => ({
  tenant: 'acme',
  keyId: 'default/k',
  keyHash: 'ab12',
  model: 'gpt-rt',
  session: { instructions: 'be brief' },
  expiresAt,
});

describe.each(backends)('client secret store ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('keeps a secret until it expires, by the pod clock', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { realtimeSecrets } = await fixture.open();
    await realtimeSecrets.put('h1', secret(clock.now() + 60_000), 10);
    expect(await realtimeSecrets.get('h1')).toEqual(secret(clock.now() + 60_000));
    expect(await realtimeSecrets.get('h2')).toBeUndefined();
    clock.advance(60_000);
    expect(await realtimeSecrets.get('h1')).toBeUndefined();
  });

  it('never stores a secret already expired', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { realtimeSecrets } = await fixture.open();
    await realtimeSecrets.put('old', secret(clock.now() - 1), 10);
    expect(await realtimeSecrets.get('old')).toBeUndefined();
  });

  it('caps the live secrets of one key, freeing a place as one expires', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { realtimeSecrets } = await fixture.open();
    expect(await realtimeSecrets.put('a', secret(clock.now() + 10_000), 2)).toBe(true);
    expect(await realtimeSecrets.put('b', secret(clock.now() + 60_000), 2)).toBe(true);
    expect(await realtimeSecrets.put('c', secret(clock.now() + 60_000), 2)).toBe(false);
    expect(await realtimeSecrets.get('c')).toBeUndefined();
    // Another key of the same tenant has its own places.
    expect(
      await realtimeSecrets.put('d', { ...secret(clock.now() + 60_000), keyId: 'default/other' }, 2),
    ).toBe(true);
    clock.advance(10_000);
    expect(await realtimeSecrets.put('c', secret(clock.now() + 60_000), 2)).toBe(true);
    expect((await realtimeSecrets.get('c'))?.model).toBe('gpt-rt');
  });

  if (backend.name === 'redis')
    it('is shared between pods', async () => {
      fixture = await backend.create({});
      const [a, b] = [await fixture.open(), await fixture.open()];
      await a.realtimeSecrets.put('shared', secret(Date.now() + 60_000), 10);
      expect((await b.realtimeSecrets.get('shared'))?.model).toBe('gpt-rt');
    });
});
