/** Streams that break, stall, lie or never start, and clients that walk away. */
import OpenAI from 'openai';
import { costUsd } from '../../dataplane/src/accounting/cost.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { DEFAULT_RETRY } from '../../dataplane/src/router/policy.ts';
import { rawStream as rawHttpStream } from '../harness/raw-stream.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-streams';
const PROMPT = 'Tell me a story about routers and their many failures';
const ANSWER = fakeAnswer(PROMPT);

let stack: Stack;
let client: OpenAI;
const A = () => stack.fakes[0]!;
const B = () => stack.fakes[1]!;

beforeAll(async () => {
  stack = await startStack(
    ([a, b]) =>
      [
        // `cont`: OpenAI first, an Anthropic deployment that accepts prefill behind it.
        deployment({
          name: 'cont-openai',
          model: 'cont',
          baseUrl: fakeBase(a!),
          priority: 1,
          streamIdleTimeoutMs: 300,
        }),
        deployment({
          name: 'cont-claude',
          model: 'cont',
          provider: 'anthropic',
          baseUrl: fakeBase(b!),
          priority: 2,
        }),
        // `plain`: two OpenAI deployments, neither accepts prefill.
        deployment({
          name: 'plain-a',
          model: 'plain',
          baseUrl: fakeBase(a!),
          priority: 1,
          firstTokenTimeoutMs: 300,
          streamIdleTimeoutMs: 300,
        }),
        deployment({ name: 'plain-b', model: 'plain', baseUrl: fakeBase(b!), priority: 2 }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { fakes: 2, retry: { ...DEFAULT_RETRY, backoffBaseMs: 20, backoffMaxMs: 100 } },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  for (const f of stack.fakes) f.reset();
  stack.gateway.health.reset();
});

async function collect(model: string) {
  const stream = await client.chat.completions.create({
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: PROMPT }],
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  let finish: string | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, usage, finish };
}

/** Raw SSE text, to check what the SDK would hide. */
async function rawStream(model: string): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(`${stack.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: PROMPT }] }),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

describe('before the first token', () => {
  it('fails over when the first token is too slow, invisibly to the client', async () => {
    A().setFaults([{ fault: { type: 'slow-stream', chunkDelayMs: 0, firstChunkDelayMs: 3000 }, times: 1 }]);
    const res = await rawStream('plain');
    expect(res.headers.get('x-gantry-provider')).toBe('plain-b');
    expect(res.headers.get('x-gantry-failed')).toBe('plain-a');
    expect(res.body).toContain('data: [DONE]');
  });

  it('fails over a 500 on a streaming request', async () => {
    A().setFaults([{ fault: { type: 'status', status: 500 }, times: 1 }]);
    const { text } = await collect('plain');
    expect(text).toBe(ANSWER);
  });
});

describe('after bytes reached the client', () => {
  it('continues a broken stream on a deployment that accepts prefill', async () => {
    A().setFaults([{ fault: { type: 'break-stream', afterChunks: 3 }, times: 1 }]);
    const { text, usage, finish } = await collect('cont');
    expect(text).toBe(ANSWER);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    const continued = B().requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    const prefill = continued.messages.at(-1)!;
    expect(prefill.role).toBe('assistant');
    expect(ANSWER.startsWith(JSON.stringify(prefill.content).length > 2 ? textOf(prefill.content) : '')).toBe(
      true,
    );
    expect(textOf(prefill.content).length).toBeGreaterThan(0);
  });

  it('continues a stalled stream too', async () => {
    A().setFaults([{ fault: { type: 'stall-stream', afterChunks: 2 }, times: 1 }]);
    const { text } = await collect('cont');
    expect(text).toBe(ANSWER);
  });

  it('ends with an error event and no [DONE] when nobody can continue', async () => {
    A().setFaults([{ fault: { type: 'break-stream', afterChunks: 3 }, times: 1 }]);
    const res = await rawStream('plain');
    expect(res.status).toBe(200);
    expect(res.body).toContain('"error"');
    expect(res.body).not.toContain('[DONE]');
    expect(res.body).not.toContain('"finish_reason":"stop"');
  });

  it('makes the OpenAI SDK raise instead of returning a truncated answer', async () => {
    A().setFaults([{ fault: { type: 'break-stream', afterChunks: 3 }, times: 1 }]);
    await expect(collect('plain')).rejects.toThrow(/stream interrupted/);
  });

  it('reports an in-stream provider error the same way', async () => {
    A().setFaults([
      { fault: { type: 'stream-error', afterChunks: 2, message: 'upstream exploded' }, times: 1 },
    ]);
    const res = await rawStream('plain');
    expect(res.body).toContain('upstream exploded');
    expect(res.body).not.toContain('[DONE]');
  });
});

describe('imperfect but complete streams', () => {
  it('skips a malformed chunk', async () => {
    A().setFaults([{ fault: { type: 'malformed-chunk', atChunk: 2 }, times: 1 }]);
    const { text } = await collect('plain');
    expect(text).toBe(ANSWER);
  });

  it('finalises promptly, with usage, a stream that never sends [DONE] and keeps the socket open', async () => {
    A().setFaults([{ fault: { type: 'no-done', keepOpen: true }, times: 1 }]);
    const { text, usage } = await collect('plain');
    expect(text).toBe(ANSWER);
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it('never bills a stream at zero: usage is estimated when the provider gives none', async () => {
    A().setFaults([{ fault: { type: 'no-usage' }, times: 1 }]);
    const { text, usage } = await collect('plain');
    expect(text).toBe(ANSWER);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('sends the cost as a trailer, priced from the usage the stream reported', async () => {
    const { headers, trailers, text } = await rawHttpStream(
      `${stack.baseURL}/chat/completions`,
      { authorization: `Bearer ${KEY}` },
      {
        model: 'plain',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      },
    );
    expect(headers.trailer?.split(/,\s*/)).toContain('x-gantry-cost');
    // A stream that was not continued: the trailer names the one deployment the header named.
    expect(trailers['x-gantry-provider']).toBe(headers['x-gantry-provider']);
    const usageLine = text
      .split('\n')
      .filter((l) => l.includes('"usage":{'))
      .at(-1)!;
    const usage = (JSON.parse(usageLine.slice('data: '.length)) as { usage: OpenAI.CompletionUsage }).usage;
    // The harness prices every deployment at $1 / $2 per million tokens.
    const expected = costUsd({ inputPerMillionTokens: 1, outputPerMillionTokens: 2 }, usage);
    expect(expected).toBeGreaterThan(0);
    expect(Number(trailers['x-gantry-cost'])).toBeCloseTo(expected, 9);
  });
});

describe('client disconnects', () => {
  it('aborts the upstream call when the client goes away mid-stream', async () => {
    A().setFaults([{ fault: { type: 'slow-stream', chunkDelayMs: 200 }, times: 1 }]);
    const before = A().abandoned;
    const abandoned = A().whenAbandoned();
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'plain', stream: true, messages: [{ role: 'user', content: PROMPT }] },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break;
    }
    controller.abort();
    await abandoned;
    expect(A().abandoned).toBe(before + 1);
  });

  it('aborts a non-streaming upstream call too', async () => {
    A().setFaults([{ fault: { type: 'delay', ms: 5000 }, times: 1 }]);
    const controller = new AbortController();
    const call = client.chat.completions.create(
      { model: 'plain', messages: [{ role: 'user', content: PROMPT }] },
      { signal: controller.signal },
    );
    const failure = call.catch((e: unknown) => e);
    for (let i = 0; i < 100 && A().requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const abandoned = A().whenAbandoned();
    controller.abort();
    await abandoned;
    expect(await failure).toBeInstanceOf(Error);
    expect(B().requests).toHaveLength(0);
  });
});

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { text?: string }) => b.text ?? '').join('');
  return '';
}
