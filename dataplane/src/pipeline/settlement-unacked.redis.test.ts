/**
 * The answer goes out once its settlement is written to Redis, not once Redis acknowledged it,
 * and the gateway's shutdown waits for that acknowledgement: with Redis holding writes
 * (CLIENT PAUSE WRITE on a private redis-server), the caller has its answer while the charge
 * and the usage record are still unapplied, and closing the gateway lands both instead of
 * dropping them.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../../../test/harness/redis.ts';
import { until } from '../../../test/harness/until.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../../../test/harness/stack.ts';

const KEY = 'sk-unacked';
const KEY_BASE = 'ua:{acme}:key:default%2Fmetered';
const LOG = 'ua:{acme}:usage:log';

describe('settlement acknowledged after the answer', () => {
  let redis: RedisInstance;
  let stack: Stack | undefined;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    stack = await startStack(
      ([fake]) =>
        [
          deployment({
            name: 'priced',
            model: 'm',
            baseUrl: fakeBase(fake!),
            pricing: { inputPerMillionTokens: 100, outputPerMillionTokens: 200 },
          }),
          tenant('acme'),
          apiKey('metered', KEY, 'acme', {
            budget: { limitUsd: 100, period: 'monthly' },
            rateLimit: { requestsPerMinute: 1000, tokensPerMinute: 1_000_000 },
          }),
        ].join(''),
      { redisUrl: redis.url, redisPrefix: 'ua' },
    );
    admin = new Redis(redis.url);
  });

  afterAll(async () => {
    await admin?.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    admin?.disconnect();
    await stack?.close();
    await redis?.stop();
  });

  const ask = async (gateway: Stack): Promise<number> => {
    const res = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
    });
    await res.text();
    return res.status;
  };

  const clientCount = async (): Promise<number> =>
    String(await admin.call('CLIENT', 'LIST'))
      .split('\n')
      .filter((l) => l.trim() !== '').length;

  const held = async (): Promise<number> => Number((await admin.hget(`${KEY_BASE}:budget`, 'held')) ?? 0);

  it('answers while Redis holds the settlement, and closing waits until it is applied', async () => {
    const s = stack!;
    const fake = s.fakes[0]!;
    expect(await ask(s)).toBe(200);
    const logBefore = await admin.llen(LOG);
    expect(await held()).toBe(0);

    // The upstream answers a second later: time to hold Redis's writes once admission is done.
    fake.setFaults([{ times: 1, fault: { type: 'delay', ms: 1_000 } }]);
    const calls = fake.requests.length;
    const answer = ask(s);
    await until('the upstream call', async () => (fake.requests.length > calls ? true : undefined));
    await admin.call('CLIENT', 'PAUSE', '60000', 'WRITE');
    let closing: Promise<void> | undefined;
    try {
      expect(await answer).toBe(200);
      // Answered, yet nothing of the settlement applied: the hold is still there, no record.
      expect(await held()).toBeGreaterThan(0);
      expect(await admin.llen(LOG)).toBe(logBefore);
      const clients = await clientCount();
      closing = s.close();
      stack = undefined;
      let closed = false;
      void closing.then(() => (closed = true));
      await until('the gateway to stop listening', async () =>
        fetch(`${s.gateway.url}/v1/models`).then(
          () => undefined,
          () => true,
        ),
      );
      // Past the HTTP drain, the close waits on the settlement with its Redis connection open.
      expect(closed).toBe(false);
      expect(await clientCount()).toBe(clients);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
    }
    await closing;
    // The gateway (and its Redis connection) closed only after the settlement was applied.
    expect(await admin.llen(LOG)).toBe(logBefore + 1);
    expect(await held()).toBe(0);
  });
});
