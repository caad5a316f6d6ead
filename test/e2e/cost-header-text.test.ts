/**
 * `X-Gantry-Cost` (the header, and the trailer on streams) states the whole micro-dollars a
 * request was charged, however large: never the binary float the amount passed through (a
 * cost of $15,030,999.995497 printed with ten places read 15030999.9954969995). Over real
 * HTTP: the openai client for the header, node:http for the trailer.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costUsd } from '../../dataplane/src/accounting/cost.ts';
import { rawStream } from '../harness/raw-stream.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-cost-header-text';
/** Near the schema's $1e9 ceiling, with fractions, so some 15,000 tokens cost over $10 million. */
const PRICING = { inputPerMillionTokens: 999_999_999.7, outputPerMillionTokens: 999_999_999.9 };
const PROMPT = 'tell me about money '.repeat(3_000);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([f]) =>
    [
      deployment({ name: 'dear', model: 'dear', baseUrl: fakeBase(f!), pricing: PRICING }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack?.close());

type Usage = { prompt_tokens: number; completion_tokens: number };

/** What the header must read for `usage`: its micro-dollars written out with integers only. */
function expectedText(usage: Usage): string {
  const micros = BigInt(Math.round(costUsd(PRICING, usage) * 1e6));
  const frac = String(micros % 1_000_000n)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `${micros / 1_000_000n}.${frac || '0'}`;
}

describe('X-Gantry-Cost on a large cost', () => {
  it('the header states exact micro-dollars', async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: stack.baseURL, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'dear', messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    const header = response.headers.get('x-gantry-cost');
    expect(Number(header)).toBeGreaterThan(1e7);
    expect(header).toMatch(/^\d+\.\d{1,6}$/);
    expect(header).toBe(expectedText(data.usage!));
  });

  it('the stream trailer states exact micro-dollars', async () => {
    const { status, trailers, events } = await rawStream(
      `${stack.baseURL}/chat/completions`,
      { authorization: `Bearer ${KEY}` },
      {
        model: 'dear',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      },
    );
    expect(status).toBe(200);
    const usage = events
      .map((e) => e.usage as Usage | null | undefined)
      .filter((u) => u)
      .at(-1);
    const trailer = trailers['x-gantry-cost'];
    expect(Number(trailer)).toBeGreaterThan(1e7);
    expect(trailer).toMatch(/^\d+\.\d{1,6}$/);
    expect(trailer).toBe(expectedText(usage!));
  });
});
