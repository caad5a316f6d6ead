import { describe, expect, it } from 'vitest';
import { costUsd } from '../accounting/cost.ts';
import { estimatePromptTokens, estimateTextTokens } from '../accounting/tokens.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatRequest, Usage } from '../formats/openai/types.ts';
import { testDeployment } from '../router/testing.ts';
import { boundedUsage, MAX_UNBOUNDED_OUTPUT_TOKENS } from '../accounting/reported-usage.ts';
import {
  chargeStream,
  chatUsageBounds,
  prefilled,
  servedModels,
  THINKING_ALLOWANCE_TOKENS,
} from './stream-charge.ts';
import type { StreamPart } from './stream-relay.ts';

const REQ: ChatRequest = {
  model: 'm',
  stream: true,
  messages: [{ role: 'user', content: 'Tell me a story about routers and their failures' }],
};

const CHEAP = { inputPerMillionTokens: 1, outputPerMillionTokens: 2 };
const DEAR = { inputPerMillionTokens: 3_000, outputPerMillionTokens: 15_000 };
const dep = (name: string, pricing: Deployment['pricing'], model = 'm'): Deployment =>
  testDeployment({ name, model, pricing });

const part = (p: Partial<StreamPart> & Pick<StreamPart, 'deployment'>): StreamPart => ({
  prefix: '',
  text: '',
  toolCallText: '',
  usage: undefined,
  cut: false,
  ...p,
});

const usage = (prompt: number, completion: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

describe('chargeStream', () => {
  it('one finished part: the provider usage as reported, at its price', () => {
    const reported = { ...usage(40, 9), prompt_tokens_details: { cached_tokens: 8 } };
    const a = dep('a', DEAR);
    const charge = chargeStream(REQ, [part({ deployment: a, text: 'x', usage: reported })], true);
    expect(charge.usage).toEqual(reported);
    expect(charge.costUsd).toBe(costUsd(DEAR, reported));
    expect(charge.parts).toEqual([{ deployment: a, usage: reported, costUsd: costUsd(DEAR, reported) }]);
  });

  it('one part without usage: counted from the prompt and the text received (never free)', () => {
    const charge = chargeStream(REQ, [part({ deployment: dep('a', CHEAP), text: 'Once upon a time' })], true);
    expect(charge.usage).toEqual(usage(estimatePromptTokens(REQ), estimateTextTokens('Once upon a time')));
    expect(charge.costUsd).toBeGreaterThan(0);
  });

  it('continued: the client is told its prompt once and every completion token it received', () => {
    const prefix = 'Once upon a time, a router';
    const cont = usage(70, 11);
    const a = dep('a', CHEAP);
    const b = dep('b', DEAR);
    const charge = chargeStream(
      REQ,
      [
        part({ deployment: a, text: prefix, cut: true }),
        part({ deployment: b, prefix, text: ' failed over.', usage: cont }),
      ],
      true,
    );
    const first = usage(estimatePromptTokens(REQ), estimateTextTokens(prefix));
    expect(charge.usage).toEqual(
      usage(first.prompt_tokens, first.completion_tokens + cont.completion_tokens),
    );
    // Each part at its own deployment's price: the continuation pays for reading the prefix again.
    expect(charge.parts).toEqual([
      { deployment: a, usage: first, costUsd: costUsd(CHEAP, first) },
      { deployment: b, usage: cont, costUsd: costUsd(DEAR, cont) },
    ]);
    const micros = Math.round(costUsd(CHEAP, first) * 1e6) + Math.round(costUsd(DEAR, cont) * 1e6);
    expect(charge.costUsd).toBe(micros / 1e6);
    expect(charge.costUsd).not.toBe(costUsd(DEAR, charge.usage));
  });

  it('a continuation without usage is counted on its prefilled prompt', () => {
    const prefix = 'Once upon';
    const charge = chargeStream(
      REQ,
      [
        part({ deployment: dep('a', CHEAP), text: prefix, cut: true }),
        part({ deployment: dep('b', CHEAP), prefix, text: ' a time' }),
      ],
      true,
    );
    expect(charge.parts[1]!.usage.prompt_tokens).toBe(estimatePromptTokens(prefilled(REQ, prefix)));
    expect(charge.parts[1]!.usage.prompt_tokens).toBeGreaterThan(charge.parts[0]!.usage.prompt_tokens);
  });

  it('a cut part keeps the prompt count its provider reported before the cut; its completion is what was received', () => {
    const charge = chargeStream(
      REQ,
      [part({ deployment: dep('a', CHEAP), text: 'Hello there', usage: usage(321, 999), cut: true })],
      true,
    );
    expect(charge.usage).toEqual(usage(321, estimateTextTokens('Hello there')));
  });

  it('a stream of only tool calls is an answer: no output reported is no report, and a cut one bills the calls', () => {
    const call = 'get_weather{"city":"Paris","unit":"celsius","days":7}';
    const d = dep('a', CHEAP);
    const told = chargeStream(REQ, [part({ deployment: d, toolCallText: call, usage: usage(20, 0) })], true);
    // The reported prompt is kept; the output is the gateway's own count of the calls.
    expect(told.usage).toEqual(usage(20, estimateTextTokens(call)));
    expect(told.costUsd).toBeGreaterThan(costUsd(CHEAP, usage(20, 0)));
    const cut = chargeStream(REQ, [part({ deployment: d, toolCallText: call, cut: true })], true);
    expect(cut.usage.completion_tokens).toBe(estimateTextTokens(call));
  });

  it('not billed (failed upstream): usage still told, nothing charged', () => {
    const charge = chargeStream(REQ, [part({ deployment: dep('a', DEAR), text: 'Hel', cut: true })], false);
    expect(charge.costUsd).toBe(0);
    expect(charge.parts[0]!.costUsd).toBe(0);
    expect(charge.usage.completion_tokens).toBeGreaterThan(0);
  });
});

describe('servedModels', () => {
  it('names each model once, in order', () => {
    expect(servedModels([{ deployment: dep('a', CHEAP, 'm') }, { deployment: dep('b', CHEAP, 'm') }])).toBe(
      'm',
    );
    expect(
      servedModels([{ deployment: dep('a', CHEAP, 'gpt') }, { deployment: dep('b', CHEAP, 'claude') }]),
    ).toBe('gpt,claude');
  });
});

describe('chatUsageBounds', () => {
  const anthropic = testDeployment({ name: 'claude', model: 'm', provider: 'anthropic', pricing: CHEAP });
  const gemini = testDeployment({ name: 'gem', model: 'm', provider: 'gemini', pricing: CHEAP });
  const openai = testDeployment({ name: 'gpt', model: 'm', pricing: CHEAP });
  const bounded = (req: ChatRequest, d: Deployment, reported: Usage) =>
    boundedUsage(reported, chatUsageBounds(req, 20, d, true));

  it('believes thinking beyond max_tokens when the request thinks (Anthropic adds the budget to max_tokens)', () => {
    const req: ChatRequest = { ...REQ, max_tokens: 500, reasoning_effort: 'high' };
    // 500 visible + ~16k of thought: billed as reported, not cut to the caller's 500.
    expect(bounded(req, anthropic, usage(20, 16_500))?.completion_tokens).toBe(16_500);
  });

  it('believes Gemini thinking beyond max_tokens without an effort (2.5 models think by default)', () => {
    expect(bounded({ ...REQ, max_tokens: 500 }, gemini, usage(20, 9_000))?.completion_tokens).toBe(9_000);
  });

  it('still cuts a report past max_tokens where nothing thinks, and past the allowance where it does', () => {
    expect(bounded({ ...REQ, max_tokens: 500 }, openai, usage(20, 9_000))?.completion_tokens).toBe(500);
    const thinking: ChatRequest = { ...REQ, max_tokens: 500, reasoning_effort: 'xhigh' };
    expect(bounded(thinking, anthropic, usage(20, 1e9))?.completion_tokens).toBe(
      500 + THINKING_ALLOWANCE_TOKENS,
    );
    expect(
      bounded({ ...REQ, max_tokens: 500, reasoning_effort: 'none' }, anthropic, usage(20, 9_000))
        ?.completion_tokens,
    ).toBe(500);
  });

  it('believes a prompt of images or a response_format schema past its own count without a context window', () => {
    const image: ChatRequest = {
      ...REQ,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'high' } },
          ],
        },
      ],
    };
    // gpt-4o-mini bills a high-detail 2048×768 image at 2,833 + 8 tiles × 5,667 tokens.
    const real = 2_833 + 5_667 * 8 + 6;
    const imageBounds = chatUsageBounds(image, estimatePromptTokens(image), openai, true);
    expect(boundedUsage(usage(real, 20), imageBounds)?.prompt_tokens).toBe(real);
    const properties = Object.fromEntries(
      Array.from({ length: 800 }, (_, i) => [
        `field_${i}`,
        { type: 'string', description: `Field ${i} of the form` },
      ]),
    );
    const schema = {
      ...REQ,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 's', schema: { type: 'object', properties } },
      },
    } as ChatRequest;
    const schemaBounds = chatUsageBounds(schema, estimatePromptTokens(schema), openai, true);
    expect(boundedUsage(usage(20_822, 20), schemaBounds)?.prompt_tokens).toBe(20_822);
  });

  it('gives the thinking allowance on the deployment’s maxOutputTokens when the caller sets no bound', () => {
    const limited = testDeployment({ ...anthropic, maxOutputTokens: 8_192 });
    const req: ChatRequest = { ...REQ, reasoning_effort: 'xhigh' };
    // The adapter sends max_tokens 4,096 + 32,768 and the answer used all of it.
    expect(bounded(req, limited, usage(20, 36_864))?.completion_tokens).toBe(36_864);
    expect(bounded(req, limited, usage(20, 1e9))?.completion_tokens).toBe(8_192 + THINKING_ALLOWANCE_TOKENS);
    // Nothing thinks: the deployment's limit alone; no limit at all: the unbounded ceiling.
    expect(bounded(REQ, limited, usage(20, 36_864))?.completion_tokens).toBe(8_192);
    expect(bounded(req, anthropic, usage(20, 200_000))?.completion_tokens).toBe(200_000);
    expect(bounded(req, anthropic, usage(20, 1e9))?.completion_tokens).toBe(MAX_UNBOUNDED_OUTPUT_TOKENS);
  });
});
