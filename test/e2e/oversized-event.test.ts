/**
 * An event past the gateway's SSE bound (16 MiB) can be the caller's doing: a legacy
 * completion streamed with `echo` and `logprobs: 20` on a vLLM-style deployment carries the
 * whole prompt with its logprobs in its first event, ~640 bytes a token in the fake (as in
 * vLLM), so a 40k-token prompt makes a ~25 MB event. It must not count against the
 * deployment (three such requests ejected it, and then the next one, until the model had
 * none), and the caller must read why its stream ended. A chat stream is not failed over
 * for one either: each deployment would be read 16 MiB for the same request.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_SSE_BYTES } from '../../dataplane/src/formats/sse.ts';
import { apiKey, deployment, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-oversized-event';
const THRESHOLD = 3;
const CAPABILITIES = ['chat', 'completions', 'streaming'];
let stack: Stack;
const first = () => stack.fakes[0]!;
/** The fake speaks as vLLM under `/vllm/` (its 20 legacy logprobs; OpenAI allows 5). */
const vllmBase = (url: string) => `${url}/vllm/v1`;
const second = () => stack.fakes[1]!;

beforeAll(async () => {
  stack = await startStack(
    ([a, b]) =>
      [
        deployment({
          name: 'first',
          model: 'm',
          baseUrl: vllmBase(a!),
          priority: 1,
          capabilities: CAPABILITIES,
        }),
        deployment({
          name: 'second',
          model: 'm',
          baseUrl: vllmBase(b!),
          priority: 2,
          capabilities: CAPABILITIES,
        }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { fakes: 2, breaker: { failureThreshold: THRESHOLD, baseOpenMs: 60_000, maxOpenMs: 60_000 } },
  );
});
afterAll(() => stack.close());
beforeEach(() => {
  for (const f of stack.fakes) f.reset();
  stack.gateway.health.reset();
});

/** 160,000 characters: 40,000 of the fake's 4-character tokens. */
const LONG_PROMPT = 'abcdefghij'.repeat(16_000);

/** A legacy stream read whole over HTTP: who served it, and its last `data:` line. */
async function echoed(): Promise<{ status: number; provider: string | null; last: string; bytes: number }> {
  const res = await fetch(`${stack.baseURL}/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', prompt: LONG_PROMPT, stream: true, echo: true, logprobs: 20 }),
  });
  const text = await res.text();
  const last = text.slice(text.lastIndexOf('\ndata: ') + 1).trim();
  return { status: res.status, provider: res.headers.get('x-gantry-provider'), last, bytes: text.length };
}

describe('a legacy stream whose first event passes the SSE bound', () => {
  it('ends with an error naming the bound, and never counts against the deployment', async () => {
    for (let i = 0; i < THRESHOLD + 1; i++) {
      const { status, provider, last, bytes } = await echoed();
      expect(status).toBe(200);
      expect(provider).toBe('first');
      // Only whole events are piped: the open one is dropped, the gateway's error event ends it.
      expect(bytes).toBeLessThan(4096);
      // Its own event, not glued to the end of the line the bound cut.
      expect(last.slice(0, 100)).toMatch(/^data: \{"error":/);
      const error = (JSON.parse(last.slice('data: '.length)) as { error: { message: string; type: string } })
        .error;
      expect(error.type).toBe('upstream_error');
      expect(error.message).toContain(`longer than ${MAX_SSE_BYTES} bytes`);
    }
    expect(stack.gateway.health.circuitState('first')).toBe('closed');
    expect(second().requests).toHaveLength(0);
    expect(first().requests).toHaveLength(THRESHOLD + 1);
  }, 60_000);
});

describe('a legacy stream past the SSE bound that no echo asked for', () => {
  it('counts against the deployment: ejected at the threshold', async () => {
    first().setFaults([{ fault: { type: 'endless-line', afterChunks: 1 } }]);
    for (let i = 0; i < THRESHOLD; i++) {
      const res = await fetch(`${stack.baseURL}/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', prompt: 'hello', stream: true }),
      });
      expect(res.headers.get('x-gantry-provider')).toBe('first');
      const text = await res.text();
      expect(text).toContain(
        `longer than ${MAX_SSE_BYTES} bytes, the gateway's bound on one streamed event"`,
      );
    }
    expect(stack.gateway.health.circuitState('first')).toBe('open');
  }, 60_000);
});

describe('a chat stream whose upstream sends a line past the SSE bound', () => {
  // The SDK's own retries left on: the gateway's answer must stop them too.
  const sdk = () => new OpenAI({ baseURL: stack.baseURL, apiKey: KEY });
  const chat = (extra: Record<string, unknown> = {}) => {
    const body = {
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'tell me a story' }],
      ...extra,
    };
    return sdk().chat.completions.create(body as OpenAI.ChatCompletionCreateParamsStreaming);
  };

  it('before the first token, no request asking for it: failed over, and the deployment is ejected', async () => {
    // The reviewer's case: a deployment that only ever sends endless lines kept its model down
    // (every stream failed, the healthy second deployment was never asked).
    first().setFaults([{ fault: { type: 'endless-line', afterChunks: 0 } }]);
    for (let i = 0; i < 20; i++) {
      let text = '';
      for await (const chunk of await chat()) text += chunk.choices[0]?.delta.content ?? '';
      expect(text.length).toBeGreaterThan(0);
    }
    expect(first().requests).toHaveLength(THRESHOLD);
    expect(second().requests).toHaveLength(20);
    expect(stack.gateway.health.circuitState('first')).toBe('open');
  }, 120_000);

  it('before the first token with echo asked for: a 502 naming the bound, one deployment read, no retry, no fault', async () => {
    first().setFaults([{ fault: { type: 'endless-line', afterChunks: 0 } }]);
    for (let i = 0; i < THRESHOLD + 1; i++) {
      const err = await chat({ echo: true }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((err as Error).message).toContain(`longer than ${MAX_SSE_BYTES} bytes`);
      expect((err as Error).message).toContain("(this request's echo can reach it)");
    }
    expect(first().requests).toHaveLength(THRESHOLD + 1);
    expect(second().requests).toHaveLength(0);
    expect(stack.gateway.health.circuitState('first')).toBe('closed');
  }, 60_000);

  it('after the first token, image output asked for: the stream ends naming the bound, the deployment is not blamed', async () => {
    first().setFaults([{ fault: { type: 'endless-line', afterChunks: 2 } }]);
    for (let i = 0; i < THRESHOLD + 1; i++) {
      const stream = await chat({ modalities: ['text', 'image'] });
      let text = '';
      const read = async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      };
      await expect(read()).rejects.toThrow(`longer than ${MAX_SSE_BYTES} bytes`);
      expect(text.length).toBeGreaterThan(0);
    }
    expect(second().requests).toHaveLength(0);
    expect(stack.gateway.health.circuitState('first')).toBe('closed');
  }, 60_000);

  it('after the first token, nothing asked for it: the deployment is blamed (ejected at the threshold)', async () => {
    first().setFaults([{ fault: { type: 'endless-line', afterChunks: 2 } }]);
    for (let i = 0; i < THRESHOLD; i++) {
      const stream = await chat();
      const read = async () => {
        for await (const _ of stream) void _;
      };
      await expect(read()).rejects.toThrow(`longer than ${MAX_SSE_BYTES} bytes`);
    }
    expect(stack.gateway.health.circuitState('first')).toBe('open');
  }, 60_000);
});
