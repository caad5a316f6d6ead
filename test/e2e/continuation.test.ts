/**
 * A stream cut mid-answer and continued on another deployment reports the truth: the client
 * is told every token it received (prefix + continuation), the trailers and the final chunk
 * name every deployment and model that contributed, and the charge is each part at its own
 * deployment's price, the same in the trailer, the key's budget and the spend metrics.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costUsd, formatUsd } from '../../dataplane/src/accounting/cost.ts';
import { estimatePromptTokens, estimateTextTokens } from '../../dataplane/src/accounting/tokens.ts';
import { readAnthropicConversation } from '../../dataplane/src/fake-provider/anthropic-read.ts';
import { plan } from '../../dataplane/src/fake-provider/behaviour.ts';
import { countTokens, fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { rawStream } from '../harness/raw-stream.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-continuation';
const PROMPT = 'Tell me a long story about a router that lost its upstream halfway through';
const ANSWER = fakeAnswer(PROMPT);
const CHEAP = { inputPerMillionTokens: 1, outputPerMillionTokens: 2 };
const DEAR = { inputPerMillionTokens: 3_000, outputPerMillionTokens: 15_000 };
const BUDGET = { limitUsd: 1_000, period: 'monthly' as const };

let stack: Stack;
let client: OpenAI;
const A = () => stack.fakes[0]!;
const B = () => stack.fakes[1]!;

beforeAll(async () => {
  stack = await startStack(
    ([a, b]) =>
      [
        // `story`: an OpenAI deployment first, an Anthropic one (prefill) behind it, priced apart.
        deployment({ name: 'cut-a', model: 'story', baseUrl: fakeBase(a!), priority: 1, pricing: CHEAP }),
        deployment({
          name: 'cont-b',
          model: 'story',
          provider: 'anthropic',
          baseUrl: fakeBase(b!, 'anthropic'),
          priority: 2,
          pricing: DEAR,
        }),
        // `epic` falls back to `saga`: the continuation is served by another model.
        deployment({
          name: 'epic-a',
          model: 'epic',
          baseUrl: fakeBase(a!),
          fallbacks: ['saga'],
          pricing: CHEAP,
        }),
        deployment({
          name: 'saga-b',
          model: 'saga',
          provider: 'anthropic',
          baseUrl: fakeBase(b!, 'anthropic'),
          pricing: DEAR,
        }),
        tenant('acme'),
        apiKey('k', KEY, 'acme', { budget: BUDGET }),
      ].join(''),
    { fakes: 2 },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  for (const f of stack.fakes) f.reset();
  stack.gateway.health.reset();
});

const cutFirst = (model: string) =>
  A().setFaults([{ match: { model }, fault: { type: 'break-stream', afterChunks: 3 }, times: 1 }]);

/** What each part was, from what the continuation was asked (the fake's deterministic contract). */
function expectedCharge(model: string) {
  const asked = B().requests.at(-1)!.body as Record<string, unknown>;
  const reply = plan(readAnthropicConversation(asked));
  if (reply.kind !== 'text') throw new Error('expected a text continuation');
  const prefix = ANSWER.slice(0, ANSWER.length - reply.text.length);
  const first = {
    prompt_tokens: estimatePromptTokens({ model, messages: [{ role: 'user', content: PROMPT }] }),
    completion_tokens: estimateTextTokens(prefix),
  };
  const second = { prompt_tokens: reply.promptTokens, completion_tokens: countTokens(reply.text) };
  const micros = [Math.round(costUsd(CHEAP, first) * 1e6), Math.round(costUsd(DEAR, second) * 1e6)];
  return { prefix, first, second, micros, costUsd: (micros[0]! + micros[1]!) / 1e6 };
}

async function spentMicros(): Promise<number> {
  const state = await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/k' }, BUDGET);
  return Math.round(state.spentUsd * 1e6);
}

async function spendMetric(provider: string, model: string): Promise<number> {
  const metric = await stack.gateway.metrics.spendMicros.get();
  const sample = metric.values.find(
    (v) => v.labels.tenant === 'acme' && v.labels.provider === provider && v.labels.model === model,
  );
  return sample?.value ?? 0;
}

describe('a stream continued after a cut', () => {
  it('through the official client: the whole answer, usage = prefix + continuation, the opening header', async () => {
    cutFirst('story');
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'story',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      })
      .withResponse();
    let text = '';
    let last: OpenAI.ChatCompletionChunk | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      last = chunk;
    }
    expect(text).toBe(ANSWER);
    // Sent before the cut was known: the deployment that started the stream.
    expect(response.headers.get('x-gantry-provider')).toBe('cut-a');

    const want = expectedCharge('story');
    expect(want.prefix.length).toBeGreaterThan(0);
    expect(want.prefix.length).toBeLessThan(ANSWER.length);
    expect(last?.model).toBe('story');
    expect(last?.usage).toEqual({
      prompt_tokens: want.first.prompt_tokens,
      completion_tokens: want.first.completion_tokens + want.second.completion_tokens,
      total_tokens: want.first.prompt_tokens + want.first.completion_tokens + want.second.completion_tokens,
    });
  });

  it('trailers name both deployments; the cost is each part at its price, and so is the spend', async () => {
    const spentBefore = await spentMicros();
    const openaiBefore = await spendMetric('openai', 'story');
    const anthropicBefore = await spendMetric('anthropic', 'story');
    cutFirst('story');

    const res = await rawStream(
      `${stack.baseURL}/chat/completions`,
      { authorization: `Bearer ${KEY}` },
      { model: 'story', stream: true, messages: [{ role: 'user', content: PROMPT }] },
    );
    expect(res.status).toBe(200);
    expect(res.text).toContain('data: [DONE]');
    expect(res.headers['x-gantry-provider']).toBe('cut-a');
    expect(res.headers.trailer?.split(/,\s*/)).toEqual(
      expect.arrayContaining(['x-gantry-cost', 'x-gantry-provider', 'x-gantry-failed']),
    );
    expect(res.trailers['x-gantry-provider']).toBe('cut-a,cont-b');
    expect(res.trailers['x-gantry-failed']).toBe('cut-a');
    expect(res.trailers['x-gantry-attempts']).toBe('2');

    const want = expectedCharge('story');
    expect(res.trailers['x-gantry-cost']).toBe(formatUsd(want.costUsd));
    // Not what the whole usage would cost at either price alone.
    const told = {
      prompt_tokens: want.first.prompt_tokens,
      completion_tokens: want.first.completion_tokens + want.second.completion_tokens,
    };
    expect(want.costUsd).not.toBe(costUsd(CHEAP, told));
    expect(want.costUsd).not.toBe(costUsd(DEAR, told));

    expect((await spentMicros()) - spentBefore).toBe(want.micros[0]! + want.micros[1]!);
    expect((await spendMetric('openai', 'story')) - openaiBefore).toBe(want.micros[0]);
    expect((await spendMetric('anthropic', 'story')) - anthropicBefore).toBe(want.micros[1]);
  });

  it('continued on a fallback model: the final chunk’s model names both models', async () => {
    cutFirst('epic');
    const res = await rawStream(
      `${stack.baseURL}/chat/completions`,
      { authorization: `Bearer ${KEY}` },
      {
        model: 'epic',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      },
    );
    const chunks = res.events as { model: string; usage?: OpenAI.CompletionUsage; choices: unknown[] }[];
    const final = chunks.at(-1)!;
    expect(final.choices).toEqual([]);
    expect(final.model).toBe('epic,saga');
    // Every earlier chunk keeps the model the stream opened with.
    expect(chunks.slice(0, -1).every((c) => c.model === 'epic')).toBe(true);
    expect(res.trailers['x-gantry-provider']).toBe('epic-a,saga-b');
    const want = expectedCharge('epic');
    expect(final.usage?.completion_tokens).toBe(want.first.completion_tokens + want.second.completion_tokens);
    expect(res.trailers['x-gantry-cost']).toBe(formatUsd(want.costUsd));
  });

  it('a stream that is not cut: one deployment in header and trailer, the provider’s usage', async () => {
    const res = await rawStream(
      `${stack.baseURL}/chat/completions`,
      { authorization: `Bearer ${KEY}` },
      {
        model: 'story',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      },
    );
    expect(res.headers['x-gantry-provider']).toBe('cut-a');
    expect(res.trailers['x-gantry-provider']).toBe('cut-a');
    expect(res.trailers['x-gantry-failed']).toBeUndefined();
    const usage = (res.events.at(-1) as { usage: OpenAI.CompletionUsage }).usage;
    expect(usage.completion_tokens).toBe(countTokens(ANSWER));
    expect(res.trailers['x-gantry-cost']).toBe(formatUsd(costUsd(CHEAP, usage)));
  });
});
