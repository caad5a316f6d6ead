/** Deployment quota windows against both backends (Redis a real redis-server), time moved by hand. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Stores } from './index.ts';
import { backends, fakeClock, type FakeClock, type StoreFixture } from './testing/backends.ts';

describe.each(backends)('deployment quota windows ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  let clock: FakeClock;

  async function open(): Promise<Stores> {
    clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    return fixture.open();
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('takes rpm requests, refuses the next with the wait until the oldest leaves, then slides', async () => {
    const { deploymentQuota } = await open();
    expect((await deploymentQuota.take('dep-a', { rpm: 2 }, 0)).allowed).toBe(true);
    clock.advance(15_000);
    expect((await deploymentQuota.take('dep-a', { rpm: 2 }, 0)).allowed).toBe(true);
    const full = await deploymentQuota.take('dep-a', { rpm: 2 }, 0);
    expect(full).toMatchObject({ allowed: false, retryAfterMs: 45_000 });
    // Another deployment's window is its own.
    expect((await deploymentQuota.take('dep-b', { rpm: 2 }, 0)).allowed).toBe(true);
    clock.advance(45_000);
    expect((await deploymentQuota.take('dep-a', { rpm: 2 }, 0)).allowed).toBe(true);
  });

  it('tpm counts the estimate, and an adjusted ticket counts the actual tokens', async () => {
    const { deploymentQuota } = await open();
    const first = await deploymentQuota.take('dep-a', { tpm: 1_000 }, 800);
    expect(first.allowed).toBe(true);
    expect((await deploymentQuota.take('dep-a', { tpm: 1_000 }, 300)).allowed).toBe(false);
    await deploymentQuota.adjust(first.ticket!, 100);
    expect((await deploymentQuota.take('dep-a', { tpm: 1_000 }, 300)).allowed).toBe(true);
  });

  it("never shares a window with a key's own limit of the same names", async () => {
    const stores = await open();
    // A tenant named like the deployment, with a key named like the window's inner key.
    const key = { tenant: 'dep-a', keyId: 'quota' };
    expect((await stores.rateLimiter.acquire(key, { requestsPerMinute: 1 }, 0)).allowed).toBe(true);
    expect((await stores.deploymentQuota.take('dep-a', { rpm: 1 }, 0)).allowed).toBe(true);
    expect((await stores.rateLimiter.acquire(key, { requestsPerMinute: 1 }, 0)).allowed).toBe(false);
    expect((await stores.deploymentQuota.take('dep-a', { rpm: 1 }, 0)).allowed).toBe(false);
  });
});

describe('deployment quota windows on Redis', () => {
  it('are shared by every pod', async () => {
    const redis = backends.find((b) => b.name === 'redis')!;
    const clock = fakeClock();
    const fixture = await redis.create({ clock: clock.now });
    try {
      const [podA, podB] = [await fixture.open(), await fixture.open()];
      expect((await podA.deploymentQuota.take('dep-a', { rpm: 2 }, 0)).allowed).toBe(true);
      expect((await podB.deploymentQuota.take('dep-a', { rpm: 2 }, 0)).allowed).toBe(true);
      expect((await podA.deploymentQuota.take('dep-a', { rpm: 2 }, 0)).allowed).toBe(false);
      expect((await podB.deploymentQuota.take('dep-a', { rpm: 2 }, 0)).allowed).toBe(false);
    } finally {
      await fixture.close();
    }
  });
});
