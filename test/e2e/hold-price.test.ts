/**
 * The hold is the most the request may be charged wherever it is served. Model `mixed` has
 * deployment A (dear input, cheap output, served first) and B (cheap input, dear output, the
 * dearer by the sum of its prices). A long prompt held at B's prices but charged at A's let a
 * $0.05 key spend $0.12 on eight concurrent requests; held at A's, the key's spend stays within
 * its budget. Charges round up to the micro-dollar: 74 embedding tokens at $0.02/M cost 2 µ$.
 * Over HTTP with the official client, in process and on real Redis.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const BUDGET = { limitUsd: 0.05, period: 'total' as const };
/** ~3,000 tokens to the gateway's tokenizer (one per " a"); the fake reports 1,500 (4 characters a token). */
const PROMPT = 'a '.repeat(3000);

const backends = [
  { name: 'in-process', tag: 'mem', opts: {} },
  {
    name: 'redis',
    tag: 'redis',
    opts: { redisUrl: testRedisUrl(), redisPrefix: `hold-price-${randomUUID()}` },
  },
];

describe.each(backends)('a hold at least the charge on any deployment ($name)', ({ tag, opts }) => {
  let stack: Stack;
  let tight: OpenAI;
  let embedder: OpenAI;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'mixed-a',
            model: 'mixed',
            baseUrl: fakeBase(url!),
            priority: 1,
            pricing: { inputPerMillionTokens: 10, outputPerMillionTokens: 0.1 },
          }),
          deployment({
            name: 'mixed-b',
            model: 'mixed',
            baseUrl: fakeBase(url!),
            priority: 2,
            pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 30 },
          }),
          deployment({
            name: 'emb',
            model: 'emb',
            baseUrl: fakeBase(url!),
            capabilities: ['embeddings'],
            pricing: { inputPerMillionTokens: 0.02, outputPerMillionTokens: 0 },
          }),
          tenant('initech'),
          apiKey(`tight-${tag}`, `sk-hold-tight-${tag}`, 'initech', { budget: BUDGET }),
          apiKey(`emb-${tag}`, `sk-hold-emb-${tag}`, 'initech', { budget: { limitUsd: 1, period: 'total' } }),
        ].join(''),
      opts,
    );
    tight = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-hold-tight-${tag}`, maxRetries: 0 });
    embedder = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-hold-emb-${tag}`, maxRetries: 0 });
  });
  afterAll(() => stack.close());

  it('eight concurrent prompt-heavy requests never spend past the budget, and each charge is within its hold', async () => {
    const one = async () => {
      try {
        const { response } = await tight.chat.completions
          .create({ model: 'mixed', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] })
          .withResponse();
        return { ok: true as const, cost: Number(response.headers.get('x-gantry-cost')) };
      } catch (err) {
        if (!(err instanceof APIError) || err.status !== 402) throw err;
        const estimate = /estimated at \$([\d.]+)/.exec(err.message)?.[1];
        return { ok: false as const, estimate: Number(estimate) };
      }
    };
    const results = await Promise.all(Array.from({ length: 8 }, one));
    const served = results.flatMap((r) => (r.ok ? [r.cost] : []));
    const holds = results.flatMap((r) => (r.ok ? [] : [r.estimate]));
    expect(served.length).toBeGreaterThan(0);
    expect(holds.length).toBeGreaterThan(0);
    // Served by A: 1,500 reported prompt tokens at $10/M is $0.015 (and the answer's few at $0.1/M).
    for (const cost of served) expect(cost).toBeGreaterThan(0.015);
    // Held at A's input price for the ~3,000 counted tokens, not B's ($0.006).
    for (const hold of holds) {
      expect(hold).toBeGreaterThan(0.03);
      expect(hold).toBeGreaterThanOrEqual(Math.max(...served));
    }
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'initech', keyId: `default/tight-${tag}` },
      BUDGET,
    );
    expect(state.spentUsd).toBeLessThanOrEqual(BUDGET.limitUsd);
    expect(state.spentUsd).toBeCloseTo(
      served.reduce((a, b) => a + b, 0),
      9,
    );
  });

  it('charges 74 embedding tokens at $0.02/M (1.48 µ$) 2 µ$, rounded up, in the header and the budget', async () => {
    const { data, response } = await embedder.embeddings
      .create({ model: 'emb', input: 'abcd'.repeat(74) })
      .withResponse();
    expect(data.usage.prompt_tokens).toBe(74);
    expect(response.headers.get('x-gantry-cost')).toBe('0.000002');
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'initech', keyId: `default/emb-${tag}` },
      { limitUsd: 1, period: 'total' },
    );
    expect(state.spentUsd).toBe(0.000002);
  });
});
