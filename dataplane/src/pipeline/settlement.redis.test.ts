/**
 * What a metered request costs in Redis traffic, end to end through a real gateway on a
 * private redis-server (so no other suite's commands are counted): the admission is one
 * script, and the settlement (written before the answer, acknowledged after it) is one more
 * script (budget settle, rate-limit adjust and usage record) pipelined with the global tenant
 * index's SADD: one round trip.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../../../test/harness/redis.ts';
import { until } from '../../../test/harness/until.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../../../test/harness/stack.ts';

const KEY = 'sk-metered';
/** The metered key's Redis keys (`default/metered`, URI-encoded, in the tenant's hash slot). */
const KEY_BASE = 'rt:{acme}:key:default%2Fmetered';

describe('a metered request in Redis', () => {
  let redis: RedisInstance;
  let stack: Stack;
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
          tenant('acme', ['*'], { wallet: { balanceUsd: 1000 } }),
          apiKey('metered', KEY, 'acme', {
            budget: { limitUsd: 100, period: 'monthly' },
            rateLimit: { requestsPerMinute: 1000, tokensPerMinute: 1_000_000 },
          }),
        ].join(''),
      { redisUrl: redis.url, redisPrefix: 'rt' },
    );
    admin = new Redis(redis.url);
  });

  afterAll(async () => {
    admin?.disconnect();
    await stack?.close();
    await redis?.stop();
  });

  const ask = async (): Promise<number> => {
    const res = await fetch(`${stack.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
    });
    await res.text();
    return res.status;
  };

  /** The commands clients sent while `during` ran, in server order (a script's own calls left out). */
  async function commandsDuring(during: () => Promise<void>): Promise<string[]> {
    const monitor = await admin.monitor();
    const seen: string[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua') seen.push(args.join(' '));
    });
    try {
      await during();
      // A marker from another connection: once the monitor shows it, it has shown all before it.
      const marker = `end-${Date.now()}`;
      await admin.echo(marker);
      await until('the monitor to catch up', async () =>
        seen.at(-1) === `echo ${marker}` ? true : undefined,
      );
      return seen.slice(0, -1);
    } finally {
      monitor.disconnect();
    }
  }

  it('admits with one script and settles with one script, three commands in all', async () => {
    // The first request on a connection sends each script in full (EVAL), so the next one is steady.
    expect(await ask()).toBe(200);
    const sent = await commandsDuring(async () => {
      expect(await ask()).toBe(200);
    });
    // Admission (rate limit + budget reserve), then the settlement script (budget settle, token
    // adjust, usage record) and the tenant index, pipelined: exactly these three commands.
    expect(sent.map((c) => c.split(' ')[0])).toEqual(['evalsha', 'evalsha', 'sadd']);
    expect(sent[1]).toContain(`${KEY_BASE}:budget`);
    expect(sent[1]).toContain('rt:{acme}:usage:log');
    expect(sent[2]).toBe('sadd rt:usage:tenants acme');
  });

  it('charges, releases the hold and records each request exactly once', async () => {
    const logBefore = await admin.llen('rt:{acme}:usage:log');
    const spentKeys = await admin.keys(`${KEY_BASE}:spent:*`);
    const spentBefore = spentKeys[0] ? Number(await admin.get(spentKeys[0])) : 0;
    expect(await ask()).toBe(200);
    // The answer does not wait for Redis to acknowledge the settlement (it was written first, on
    // the gateway's own connection); this connection waits to see it.
    await until('the settlement', async () =>
      (await admin.llen('rt:{acme}:usage:log')) > logBefore ? true : undefined,
    );
    const [spentKey] = await admin.keys(`${KEY_BASE}:spent:*`);
    // The fake answers with usage, so every request costs something at these prices.
    expect(Number(await admin.get(spentKey!))).toBeGreaterThan(spentBefore);
    expect(await admin.llen('rt:{acme}:usage:log')).toBe(logBefore + 1);
    // No hold is left behind once settled (released, not merely expiring).
    expect(await admin.zcard(`${KEY_BASE}:resexp`)).toBe(0);
    expect(Number((await admin.hget(`${KEY_BASE}:budget`, 'held')) ?? 0)).toBe(0);
    // The rate window holds the request with its actual tokens (the estimate was adjusted), and
    // the window's token total is the sum of its entries.
    const [newest] = await admin.lrange('rt:{acme}:usage:log', 0, 0);
    const total = (JSON.parse(newest!) as { totalTokens: number }).totalTokens;
    const entries = await admin.zrange(`${KEY_BASE}:rl:w`, 0, -1);
    expect(entries.at(-1)).toMatch(new RegExp(`:${total}$`));
    const sum = entries.reduce((n, e) => n + Number(e.slice(e.lastIndexOf(':') + 1)), 0);
    expect(Number(await admin.get(`${KEY_BASE}:rl:t`))).toBe(sum);
  });
});
