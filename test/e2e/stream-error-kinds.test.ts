/**
 * An error event inside a stream is classified like the same error answered as HTTP, for
 * every provider's stream format: only the provider's own failure counts against the
 * deployment. An OpenAI-style `{error: {type: 'invalid_request_error'}}` mid-stream (the
 * provider rejecting the caller's prompt) used to count as a server fault whatever its type,
 * so a caller could eject a deployment with a few such requests.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-stream-error-kinds';
const PROVIDERS = ['openai', 'anthropic', 'gemini'] as const;
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(
    (urls) =>
      [
        ...PROVIDERS.map((provider, i) =>
          deployment({
            name: provider,
            model: `m-${provider}`,
            provider,
            baseUrl: fakeBase(urls[i]!, provider),
          }),
        ),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    // One fault ejects: any in-stream error wrongly counted shows at once.
    { fakes: PROVIDERS.length, breaker: { failureThreshold: 1, baseOpenMs: 60_000, maxOpenMs: 60_000 } },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  for (const f of stack.fakes) f.reset();
  stack.gateway.health.reset();
});

/** One stream read to its end; whether it ended in an error. */
async function stream(model: string): Promise<boolean> {
  const s = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'tell me a story' }],
    stream: true,
  });
  try {
    for await (const chunk of s) void chunk;
    return false;
  } catch {
    return true;
  }
}

describe.each(PROVIDERS.map((p, i) => [p, i] as const))(
  '%s: an error event after the first token',
  (provider, i) => {
    it('caused by the request (400) leaves the deployment in rotation', async () => {
      stack.fakes[i]!.setFaults([
        { fault: { type: 'stream-error', afterChunks: 2, status: 400, message: 'Invalid prompt: flagged' } },
      ]);
      expect(await stream(`m-${provider}`)).toBe(true);
      expect(stack.gateway.health.circuitState(provider)).toBe('closed');
    });
    it('the provider’s own failure (500) counts against it', async () => {
      stack.fakes[i]!.setFaults([{ fault: { type: 'stream-error', afterChunks: 2, status: 500 } }]);
      expect(await stream(`m-${provider}`)).toBe(true);
      expect(stack.gateway.health.circuitState(provider)).toBe('open');
    });
  },
);
