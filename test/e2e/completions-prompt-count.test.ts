/**
 * A legacy completion's prompt is tokenised once per request: admission counts it for a
 * metered key, and settling the answer (bounding the provider's usage, or counting when it
 * reports none) reuses that count. Over real HTTP with the openai client; the tokenizer entry
 * point is wrapped to count the calls made on the prompt.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Tokens from '../../dataplane/src/accounting/tokens.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const counted = vi.hoisted(() => ({ texts: [] as string[] }));
vi.mock('../../dataplane/src/accounting/tokens.ts', async (importOriginal) => {
  const real = await importOriginal<typeof Tokens>();
  return {
    ...real,
    estimateTextTokens: (text: string): number => {
      counted.texts.push(text);
      return real.estimateTextTokens(text);
    },
  };
});

const METERED = 'sk-test-prompt-count-metered';
const PLAIN = 'sk-test-prompt-count-plain';
/** Short enough (under 256 characters) that the tokenizer's memo does not answer for it. */
const PROMPT = 'Count the tokens of this prompt once, please.';
const PRICE = { inputPerMillionTokens: 1, outputPerMillionTokens: 2 };

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([f]) =>
    [
      deployment({
        name: 'legacy',
        model: 'legacy',
        baseUrl: fakeBase(f!),
        pricing: PRICE,
        capabilities: ['completions', 'streaming'],
      }),
      tenant('acme'),
      apiKey('metered', METERED, 'acme', { budget: { limitUsd: 100, period: 'monthly' } }),
      apiKey('plain', PLAIN, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack?.close());
beforeEach(() => {
  counted.texts.length = 0;
});

const promptCounts = (): number => counted.texts.filter((t) => t === PROMPT).length;
const client = (key: string) => new OpenAI({ apiKey: key, baseURL: stack.baseURL, maxRetries: 0 });

describe('a legacy completion counts its prompt once', () => {
  it('answered whole, for a metered key (admission, then the usage bound)', async () => {
    const answer = await client(METERED).completions.create({
      model: 'legacy',
      prompt: PROMPT,
      max_tokens: 16,
    });
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(promptCounts()).toBe(1);
  });

  it('streamed, for a metered key (admission, then the settlement at the end)', async () => {
    const { data: stream, response } = await client(METERED)
      .completions.create({ model: 'legacy', prompt: PROMPT, max_tokens: 16, stream: true })
      .withResponse();
    let text = '';
    for await (const event of stream) text += event.choices[0]?.text ?? '';
    expect(text).not.toBe('');
    // Settled once its record is written: wait for that, not for a time.
    const id = response.headers.get('x-gantry-request-id');
    await vi.waitFor(() => usageRecord(stack, 'acme', id));
    expect(promptCounts()).toBe(1);
  });

  it('for a key without a budget (no admission count), once when it is settled', async () => {
    const answer = await client(PLAIN).completions.create({
      model: 'legacy',
      prompt: PROMPT,
      max_tokens: 16,
    });
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(promptCounts()).toBe(1);
  });
});
