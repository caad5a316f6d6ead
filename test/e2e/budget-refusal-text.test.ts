/**
 * A 402's message states money as a person would read it: each amount exact to the
 * micro-dollar it is kept in, never the binary float it passed through (a budget of
 * $2,500,000.30 printed as 2500000.2999999998, or an estimate below one micro-dollar printed
 * with ten places). Over real HTTP with the openai client.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const BIG = 'sk-budget-text-big';
const BROKE = 'sk-budget-text-broke';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([f]) =>
    [
      deployment({
        name: 'dear',
        model: 'dear',
        baseUrl: fakeBase(f!),
        pricing: { inputPerMillionTokens: 1_000, outputPerMillionTokens: 1_000_000_000 },
      }),
      deployment({
        name: 'cheap',
        model: 'cheap',
        baseUrl: fakeBase(f!),
        pricing: { inputPerMillionTokens: 0.1, outputPerMillionTokens: 0.1 },
      }),
      tenant('acme'),
      apiKey('big', BIG, 'acme', { budget: { limitUsd: 2_500_000.3, period: 'monthly' } }),
      apiKey('broke', BROKE, 'acme', { budget: { limitUsd: 0, period: 'monthly' } }),
    ].join(''),
  );
});
afterAll(() => stack?.close());

async function refusal(key: string, model: string, maxTokens: number): Promise<string> {
  const client = new OpenAI({ apiKey: key, baseURL: stack.baseURL, maxRetries: 0 });
  const err = await client.chat.completions
    .create({ model, max_tokens: maxTokens, messages: [{ role: 'user', content: 'hi' }] })
    .then(
      () => {
        throw new Error('the request was admitted');
      },
      (e: unknown) => e,
    );
  if (!(err instanceof OpenAI.APIError)) throw err;
  expect(err.status).toBe(402);
  return err.message;
}

/** Every dollar amount in `text`. */
const amounts = (text: string): string[] => text.match(/\$[0-9.]+/g) ?? [];

describe('a budget refusal', () => {
  it('states a large budget and what remains of it to the cent, without float noise', async () => {
    const message = await refusal(BIG, 'dear', 3_000);
    expect(message).toContain("$2500000.30 remaining of this key's monthly budget of $2500000.30");
    expect(message).toMatch(/estimated at \$3000000\.\d+/);
    for (const a of amounts(message)) expect(a).toMatch(/^\$\d+\.\d{2,6}$/);
  });

  it('states an estimate under one micro-dollar as the micro-dollar held for it', async () => {
    const message = await refusal(BROKE, 'cheap', 1);
    expect(message).toContain('$0.00 remaining');
    expect(message).toContain('estimated at $0.000001');
    for (const a of amounts(message)) expect(a).toMatch(/^\$\d+\.\d{2,6}$/);
  });
});
