/**
 * Compression's extraction call runs after admission, on a model the admission did not price,
 * and is charged with the request: it holds its own worst case first. A $0.01 key whose
 * extraction model is dearer than its chat model spent ~$0.1 per long request; now the
 * extraction it cannot afford is not made (the request passes through uncompressed, within its
 * own hold), and a key that can afford it is charged the answer plus the extraction, no more
 * than it held. Over HTTP with the official client, in process and on real Redis.
 */
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentTrace } from '../../dataplane/src/pipeline/compression/fixtures.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const POOR = { limitUsd: 0.01, period: 'total' as const };
const RICH = { limitUsd: 5, period: 'total' as const };
const H = 'x-gantrystate-';

const backends = [
  { name: 'in-process', tag: 'mem', opts: {} },
  {
    name: 'redis',
    tag: 'redis',
    opts: { redisUrl: testRedisUrl(), redisPrefix: `compression-hold-${randomUUID()}` },
  },
];

describe.each(backends)('the extraction call holds its own worst case ($name)', ({ tag, opts }) => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'cheap-chat',
            model: 'cheap-chat',
            baseUrl: fakeBase(url!),
            pricing: { inputPerMillionTokens: 0.1, outputPerMillionTokens: 0.2 },
            capabilities: ['chat', 'tools'],
          }),
          deployment({
            name: 'dear-extractor',
            model: 'dear-extractor',
            baseUrl: fakeBase(url!),
            pricing: { inputPerMillionTokens: 10, outputPerMillionTokens: 10 },
            capabilities: ['chat'],
          }),
          tenant('acme', ['*'], {
            compression: { enabled: true, extractionModel: 'dear-extractor' },
            wallet: { balanceUsd: 10 },
          }),
          apiKey(`poor-${tag}`, `sk-xhold-poor-${tag}`, 'acme', { budget: POOR }),
          apiKey(`topup-${tag}`, `sk-xhold-topup-${tag}`, 'acme', {
            budget: POOR,
            autoRecharge: { enabled: true, thresholdUsd: 0, amountUsd: 1, monthlyCapUsd: 5 },
          }),
          apiKey(`rich-${tag}`, `sk-xhold-rich-${tag}`, 'acme', { budget: RICH }),
        ].join(''),
      opts,
    );
  });
  afterAll(() => stack.close());

  const ask = (who: 'poor' | 'rich' | 'topup') => {
    const g = agentTrace(11, 16);
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-xhold-${who}-${tag}`, maxRetries: 0 });
    return client.chat.completions
      .create({
        model: 'cheap-chat',
        max_tokens: 200,
        messages: g.request.messages,
        tools: g.request.tools,
      } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
  };
  const spent = async (who: 'poor' | 'rich') =>
    (
      await stack.gateway.stores.budgets.state(
        { tenant: 'acme', keyId: `default/${who}-${tag}` },
        who === 'poor' ? POOR : RICH,
      )
    ).spentUsd;

  it('a key that cannot hold the extraction gets its answer uncompressed and spends within its budget', async () => {
    const { response } = await ask('poor');
    const answer = Number(response.headers.get('x-gantry-cost'));
    expect(answer).toBeGreaterThan(0);
    expect(await spent('poor')).toBeLessThanOrEqual(POOR.limitUsd);
    expect(await spent('poor')).toBe(answer);
    expect(response.headers.get(`${H}mode`)).toBe('none');
    expect(response.headers.get(`${H}fallback`)).toBe('extraction_failed');
    expect(response.headers.get(`${H}extraction-prompt-tokens`)).toBe('0');
    // No extraction reached the provider.
    const extractions = stack.fakes[0]!.requests.filter(
      (r) => (r.body as { model?: string } | undefined)?.model === 'dear-extractor',
    );
    expect(extractions).toHaveLength(0);
  });

  it('an auto-recharging key that cannot hold the extraction skips it: no wallet money moves for it', async () => {
    const before = await stack.gateway.stores.wallets.balance('acme');
    const { response } = await ask('topup');
    expect(response.headers.get(`${H}mode`)).toBe('none');
    expect(response.headers.get(`${H}fallback`)).toBe('extraction_failed');
    const ledger = await stack.gateway.stores.wallets.ledger('acme');
    expect(ledger.filter((e) => e.reference?.endsWith(':compression'))).toEqual([]);
    expect(await stack.gateway.stores.wallets.balance('acme')).toBe(before);
  });

  it('a key that can is charged the answer plus the extraction, and nothing stays held', async () => {
    const { response } = await ask('rich');
    expect(response.headers.get(`${H}mode`)).toBe('state');
    const answer = Number(response.headers.get('x-gantry-cost'));
    const xPrompt = Number(response.headers.get(`${H}extraction-prompt-tokens`));
    const xCompletion = Number(response.headers.get(`${H}extraction-completion-tokens`));
    expect(xPrompt).toBeGreaterThan(1000);
    const extraction = Math.ceil((xPrompt + xCompletion) * 10) / 1e6;
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: `default/rich-${tag}` },
      RICH,
    );
    expect(state.spentUsd).toBeCloseTo(answer + extraction, 9);
    expect(state.heldUsd).toBe(0);
  });
});
