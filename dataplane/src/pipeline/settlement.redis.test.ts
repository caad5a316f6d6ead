/**
 * What a metered request costs in Redis traffic, end to end through a real gateway on a
 * private redis-server (so no other suite's commands are counted): the admission is one
 * script, and the settlement after the answer is one round trip.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../../../test/harness/redis.ts';
import { until } from '../../../test/harness/until.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../../../test/harness/stack.ts';

const KEY = 'sk-metered';

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

  it('admits with one script and settles with one script per store', async () => {
    // The first request loads the scripts (EVALSHA then EVAL), so the next one is steady.
    expect(await ask()).toBe(200);
    const sent = await commandsDuring(async () => {
      expect(await ask()).toBe(200);
    });
    const names = sent.map((c) => c.split(' ')[0]);
    // Admission (rate limit + budget), then budget settle, rate-limit token adjust and the usage
    // record (script + tenant index), the last three sent together and awaited together.
    // The settlement's commands go out together, so their order on the server is not fixed.
    expect(names[0]).toBe('evalsha');
    expect(names.slice(1).sort()).toEqual(['evalsha', 'evalsha', 'evalsha', 'sadd']);
    expect(sent).toContain('sadd rt:usage:tenants acme');
  });
});
