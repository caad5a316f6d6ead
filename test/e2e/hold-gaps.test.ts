/**
 * What a budget hold must cover beyond the requested model's own prices: a routing level's
 * model failing over to its fallbacks, the thinking output billing allows, and a cache hit
 * longer than the output held. Each shown with money: a key's spend never passes its budget, a
 * refusal states a hold at least the charge billing would allow, and a hit's charge is at most
 * its hold. Over HTTP with the official client, in process and on real Redis.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { THINKING_ALLOWANCE_TOKENS } from '../../dataplane/src/accounting/thinking.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';

/** ~3,000 tokens to the gateway's tokenizer; the fake reports 1,500 (4 characters a token). */
const PROMPT = 'a '.repeat(3000);
const CHEAP = { inputPerMillionTokens: 0.15, outputPerMillionTokens: 0.6 };
const DEAR = { inputPerMillionTokens: 100, outputPerMillionTokens: 1 };
const THINKER = { inputPerMillionTokens: 1.25, outputPerMillionTokens: 10 };
const TIGHT = { limitUsd: 0.05, period: 'total' as const };
const TENTH = { limitUsd: 0.1, period: 'total' as const };
/** Enough for the fresh answer's hold: 4,096 output tokens at $1,000/M. */
const AMPLE = { limitUsd: 10, period: 'total' as const };

const everyLevel = (model: string, reasoningEffort?: string) => {
  const level = { model, ...(reasoningEffort && { reasoningEffort }) };
  return { enabled: true, levels: { trivial: level, standard: level, complex: level } };
};

const backends = [
  { name: 'in-process', tag: 'mem', opts: {} },
  {
    name: 'redis',
    tag: 'redis',
    opts: { redisUrl: testRedisUrl(), redisPrefix: `hold-gaps-${randomUUID()}` },
  },
];

/** The estimate a 402 states, or the cost header of an answer. */
async function outcome(
  call: () => Promise<{ response: Response }>,
): Promise<{ ok: true; cost: number } | { ok: false; estimate: number }> {
  try {
    const { response } = await call();
    return { ok: true, cost: Number(response.headers.get('x-gantry-cost')) };
  } catch (err) {
    if (!(err instanceof APIError) || err.status !== 402) throw err;
    return { ok: false, estimate: Number(/estimated at \$([\d.]+)/.exec(err.message)?.[1]) };
  }
}

describe.each(backends)('holds that cover every charge ($name)', ({ tag, opts }) => {
  let stack: Stack;
  const client = (key: string) =>
    new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-gaps-${key}-${tag}`, maxRetries: 0 });
  const spent = async (key: string, budget: { limitUsd: number; period: 'total' }) =>
    (
      await stack.gateway.stores.budgets.state(
        { tenant: tenantOf(key), keyId: `default/${key}-${tag}` },
        budget,
      )
    ).spentUsd;
  const tenantOf = (key: string) => (key.startsWith('cache') ? 'cached' : key.split('-')[0]!);

  /** `shortMax`: the `short` deployment's maxOutputTokens, lowered by a reload in the cache test. */
  const config = (url: string, shortMax?: number): string =>
    [
      deployment({ name: 'small', model: 'small', baseUrl: fakeBase(url!), pricing: CHEAP }),
      deployment({
        name: 'routed',
        model: 'routed',
        baseUrl: fakeBase(url!),
        upstreamModel: 'routed-up',
        pricing: CHEAP,
        fallbacks: ['big'],
      }),
      deployment({ name: 'big', model: 'big', baseUrl: fakeBase(url!), pricing: DEAR }),
      deployment({
        name: 'gem',
        model: 'gem',
        provider: 'gemini',
        baseUrl: fakeBase(url!, 'gemini'),
        pricing: THINKER,
      }),
      deployment({
        name: 'reasoner',
        model: 'reasoner',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'streaming', 'reasoning'],
        pricing: THINKER,
      }),
      deployment({
        name: 'short',
        model: 'short',
        baseUrl: fakeBase(url!),
        pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 1000 },
        ...(shortMax !== undefined && { extra: { maxOutputTokens: shortMax } }),
      }),
      deployment({ name: 'embed', model: 'embed', baseUrl: fakeBase(url!), capabilities: ['embeddings'] }),
      manifest('CachePolicy', 'gaps', { embeddingModel: 'embed' }),
      tenant('routes', ['*'], { routing: everyLevel('routed') }),
      tenant('thinks', ['*'], { routing: everyLevel('reasoner', 'high') }),
      tenant('plain'),
      tenant('cached', ['*'], { cache: { enabled: true, policyRef: { name: 'gaps' } } }),
      apiKey(`routes-${tag}`, `sk-gaps-routes-${tag}`, 'routes', { budget: TIGHT }),
      apiKey(`thinks-${tag}`, `sk-gaps-thinks-${tag}`, 'thinks', { budget: TENTH }),
      apiKey(`plain-${tag}`, `sk-gaps-plain-${tag}`, 'plain', { budget: TENTH }),
      apiKey(`cache-${tag}`, `sk-gaps-cache-${tag}`, 'cached', { budget: AMPLE }),
      apiKey(`cacheprobe-${tag}`, `sk-gaps-cacheprobe-${tag}`, 'cached', {
        budget: { limitUsd: 0.000001, period: 'total' },
      }),
    ].join('');

  beforeAll(async () => {
    stack = await startStack(([url]) => config(url!), {
      ...opts,
      watch: true,
      env: { FAKE_PROVIDER_KEY: 'sk-fake' },
    });
  });
  afterAll(() => stack.close());
  beforeEach(() => stack.fakes[0]!.reset());

  it("holds a routing level's fallbacks: a routed model failing over to a dear one cannot pass the budget", async () => {
    stack.fakes[0]!.setFaults([{ match: { model: 'routed-up' }, fault: { type: 'status', status: 500 } }]);
    const result = await outcome(() =>
      client('routes')
        .chat.completions.create({
          model: 'small',
          max_tokens: 10,
          messages: [{ role: 'user', content: PROMPT }],
        })
        .withResponse(),
    );
    // At big's $100/M input the ~3,000 counted prompt tokens are held at $0.30; the cheap
    // models alone held $0.0005, and the failover to big charged 1,500 tokens, $0.15.
    expect(result).toMatchObject({ ok: false });
    if (!result.ok) expect(result.estimate).toBeGreaterThan(0.3);
    expect(await spent('routes', TIGHT)).toBeLessThanOrEqual(TIGHT.limitUsd);
  });

  it('holds the thinking allowance billing gives a Gemini deployment', async () => {
    const result = await outcome(() =>
      client('plain')
        .chat.completions.create({
          model: 'gem',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'hi' }],
        })
        .withResponse(),
    );
    // Billing believes up to 100 + 32,768 output tokens at $10/M: $0.3287, over the $0.10 budget.
    const billable = ((100 + THINKING_ALLOWANCE_TOKENS) * THINKER.outputPerMillionTokens) / 1e6;
    expect(result).toMatchObject({ ok: false });
    if (!result.ok) expect(result.estimate).toBeGreaterThanOrEqual(billable);
  });

  it("holds the allowance for the caller's effort, and for the one routing may inject, not otherwise", async () => {
    const ask = (key: string, effort?: 'high' | 'none', headers: Record<string, string> = {}) =>
      outcome(() =>
        client(key)
          .chat.completions.create(
            {
              model: key === 'plain' ? 'reasoner' : 'small',
              max_tokens: 100,
              ...(effort && { reasoning_effort: effort }),
              messages: [{ role: 'user', content: 'hi' }],
            },
            { headers },
          )
          .withResponse(),
      );
    expect(await ask('plain', 'high')).toMatchObject({ ok: false });
    expect(await ask('thinks')).toMatchObject({ ok: false });
    // Routing off for the request, or the caller's `none` (which routing keeps): no thinking.
    expect(await ask('thinks', undefined, { 'x-gantry-route': 'false' })).toMatchObject({ ok: true });
    expect(await ask('thinks', 'none')).toMatchObject({ ok: true });
    expect(await ask('plain')).toMatchObject({ ok: true });
  });

  it('charges a cache hit longer than its hold at most the hold', async () => {
    const ask = (key: string) =>
      outcome(() =>
        client(key)
          .chat.completions.create({
            model: 'short',
            messages: [{ role: 'user', content: 'Tell me everything about the hold rule, at length.' }],
          })
          .withResponse(),
      );
    // The fresh answer (~30 tokens, unbounded) is stored; then the operator lowers the
    // deployment's limit to 5 output tokens, which a request without max_tokens is held at.
    const fresh = await ask('cache');
    expect(fresh.ok).toBe(true);
    const reloaded = new Promise<void>((resolve) => {
      const off = stack.gateway.config.onReload(() => {
        off();
        resolve();
      });
    });
    await stack.writeConfig(config(stack.fakes[0]!.url, 5));
    await reloaded;
    const probe = await ask('cacheprobe');
    if (probe.ok) throw new Error('the probe key must be refused: it states the hold');
    const before = await spent('cache', AMPLE);
    const hit = await ask('cache');
    if (!hit.ok) throw new Error('the hit must be served');
    // The replaced call's price for the stored ~30 output tokens at $1,000/M (the fresh
    // answer's cost) is above the hold of 5; the hit is charged the hold.
    if (!fresh.ok) return;
    expect(fresh.cost).toBeGreaterThan(probe.estimate * 2);
    expect(hit.cost).toBe(probe.estimate);
    expect((await spent('cache', AMPLE)) - before).toBeCloseTo(hit.cost, 9);
  });
});
