/**
 * A deployment that breaks its streams after the first token is at fault like one that fails
 * before it: its first token must not clear the faults its cut streams counted, or it is never
 * ejected and every stream sent there breaks (it used to: five cut streams in a row left its
 * circuit closed while a healthy deployment stood by). A stream that finishes clears them.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Fault } from '../../dataplane/src/fake-provider/types.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-stream-cut';
const THRESHOLD = 3;
const CAPABILITIES = ['chat', 'completions', 'streaming'];
let stack: Stack;
let client: OpenAI;
const cutting = () => stack.fakes[0]!;

beforeAll(async () => {
  stack = await startStack(
    ([a, b]) =>
      [
        deployment({
          name: 'cutting',
          model: 'm',
          baseUrl: fakeBase(a!),
          priority: 1,
          capabilities: CAPABILITIES,
        }),
        deployment({
          name: 'steady',
          model: 'm',
          baseUrl: fakeBase(b!),
          priority: 2,
          capabilities: CAPABILITIES,
        }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { fakes: 2, breaker: { failureThreshold: THRESHOLD, baseOpenMs: 60_000, maxOpenMs: 60_000 } },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  for (const f of stack.fakes) f.reset();
  stack.gateway.health.reset();
});

const BREAK: Fault = { type: 'break-stream', afterChunks: 2 };

/** One stream read to its end: who served it and whether it broke. */
async function stream(): Promise<{ provider: string | null; broke: boolean }> {
  const { data, response } = await client.chat.completions
    .create({ model: 'm', messages: [{ role: 'user', content: 'tell me a story' }], stream: true })
    .withResponse();
  let broke = false;
  try {
    for await (const chunk of data) void chunk;
  } catch {
    broke = true;
  }
  return { provider: response.headers.get('x-gantry-provider'), broke };
}

describe('streams cut after their first token count against the deployment', () => {
  it('a deployment that cuts every stream is ejected after the threshold', async () => {
    cutting().setFaults([{ fault: BREAK }]);
    for (let i = 0; i < THRESHOLD; i++) expect(await stream()).toEqual({ provider: 'cutting', broke: true });
    expect(stack.gateway.health.circuitState('cutting')).toBe('open');
    expect(await stream()).toEqual({ provider: 'steady', broke: false });
  });

  it('a stream that finishes clears the cuts before it', async () => {
    for (let round = 0; round < 2; round++) {
      cutting().setFaults([{ fault: BREAK, times: THRESHOLD - 1 }]);
      for (let i = 0; i < THRESHOLD - 1; i++) expect((await stream()).broke).toBe(true);
      expect(await stream()).toEqual({ provider: 'cutting', broke: false });
    }
    expect(stack.gateway.health.circuitState('cutting')).toBe('closed');
  });
});

/** One legacy completions stream read to its end: who served it and whether it broke. */
async function legacyStream(): Promise<{ provider: string | null; broke: boolean }> {
  const { data, response } = await client.completions
    .create({ model: 'm', prompt: 'tell me a story', stream: true })
    .withResponse();
  let broke = false;
  try {
    // The gateway ends a failed legacy stream with an error event, which the SDK throws on.
    for await (const chunk of data) void chunk;
  } catch {
    broke = true;
  }
  return { provider: response.headers.get('x-gantry-provider'), broke };
}

describe('legacy /v1/completions streams get the same verdict at their end', () => {
  it('a deployment that cuts every stream is ejected after the threshold', async () => {
    cutting().setFaults([{ fault: BREAK }]);
    for (let i = 0; i < THRESHOLD; i++)
      expect(await legacyStream()).toEqual({ provider: 'cutting', broke: true });
    expect(stack.gateway.health.circuitState('cutting')).toBe('open');
    expect(await legacyStream()).toEqual({ provider: 'steady', broke: false });
  });

  it('a stream that finishes clears the cuts before it', async () => {
    cutting().setFaults([{ fault: BREAK, times: THRESHOLD - 1 }]);
    for (let i = 0; i < THRESHOLD - 1; i++) expect((await legacyStream()).broke).toBe(true);
    expect(await legacyStream()).toEqual({ provider: 'cutting', broke: false });
    cutting().setFaults([{ fault: BREAK, times: THRESHOLD - 1 }]);
    for (let i = 0; i < THRESHOLD - 1; i++) expect((await legacyStream()).broke).toBe(true);
    expect(stack.gateway.health.circuitState('cutting')).toBe('closed');
  });

  it('an error event about the request (400) is no fault; the provider’s own (500) is', async () => {
    cutting().setFaults([{ fault: { type: 'stream-error', afterChunks: 2, status: 400 }, times: THRESHOLD }]);
    for (let i = 0; i < THRESHOLD; i++) expect((await legacyStream()).broke).toBe(true);
    expect(stack.gateway.health.circuitState('cutting')).toBe('closed');
    cutting().setFaults([{ fault: { type: 'stream-error', afterChunks: 2, status: 500 }, times: THRESHOLD }]);
    for (let i = 0; i < THRESHOLD; i++) expect((await legacyStream()).broke).toBe(true);
    expect(stack.gateway.health.circuitState('cutting')).toBe('open');
  });

  it('an error event followed by a clean [DONE] (as vLLM sends) is still the stream’s verdict', async () => {
    const fault: Fault = { type: 'stream-error', afterChunks: 2, status: 500, thenEnd: true };
    cutting().setFaults([{ fault, times: THRESHOLD }]);
    for (let i = 0; i < THRESHOLD; i++) await legacyStream();
    expect(stack.gateway.health.circuitState('cutting')).toBe('open');
  });
});
