/**
 * Streams whose upstream reads are odd: one huge event, thousands of tiny ones, the usage
 * event cut into pieces. The gateway relays each read's events together; whatever the reads,
 * the client gets every token, the usage and its cost. The upstream is a scripted node:http
 * server speaking OpenAI's SSE, paced by its own write callbacks.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costUsd } from '../../dataplane/src/accounting/cost.ts';
import { rawStream } from '../harness/raw-stream.ts';
import { apiKey, deployment, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-stream-reads';
const USAGE = { prompt_tokens: 21, completion_tokens: 3456, total_tokens: 3477 };
const HUGE = 'lorem ipsum '.repeat(100_000);
const TINY = Array.from({ length: 4000 }, (_, i) => String.fromCharCode(97 + (i % 26)));

const event = (body: Record<string, unknown>): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up', ...body })}\n\n`;
const delta = (content: string): string =>
  event({ choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], usage: null });
const FINISH = event({
  choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
  usage: null,
});
const USAGE_EVENT = event({ choices: [], usage: USAGE });

/** What the scripted upstream writes for each model, piece by piece. */
const SCRIPTS: Record<string, () => string[]> = {
  huge: () => [delta(HUGE), FINISH, USAGE_EVENT, 'data: [DONE]\n\n'],
  tiny: () => [...TINY.map(delta), FINISH, USAGE_EVENT, 'data: [DONE]\n\n'],
  // The usage event arrives a few bytes at a time, after the answer finished.
  split: () => [delta('split '), delta('usage'), FINISH, ...pieces(USAGE_EVENT, 7), 'data: [DONE]\n\n'],
};
const TEXTS: Record<string, string> = { huge: HUGE, tiny: TINY.join(''), split: 'split usage' };

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

let upstream: Server;
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { model } = JSON.parse(body) as { model: string };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void (async () => {
        for (const piece of SCRIPTS[model]!())
          await new Promise<void>((done) => res.write(piece, () => done()));
        res.end();
      })();
    });
  });
  await new Promise<void>((ready) => upstream.listen(0, '127.0.0.1', ready));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  stack = await startStack(
    () =>
      [
        ...Object.keys(SCRIPTS).map((model) =>
          deployment({ name: `scripted-${model}`, model, baseUrl: url }),
        ),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { fakes: 0 },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(async () => {
  await stack.close();
  await new Promise((closed) => upstream.close(closed));
});

describe('odd upstream reads, whole answers', () => {
  for (const model of Object.keys(SCRIPTS)) {
    it(`${model}: every token, the usage and its cost reach the client`, async () => {
      const stream = await client.chat.completions.create({
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'go' }],
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      let finish: string | null | undefined;
      const ids = new Set<string>();
      for await (const chunk of stream) {
        ids.add(chunk.id);
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe(TEXTS[model]);
      expect(finish).toBe('stop');
      expect(usage).toMatchObject(USAGE);
      // The gateway's own id on every chunk, not the upstream's.
      expect([...ids]).toHaveLength(1);
      expect([...ids][0]).not.toBe('chatcmpl-up');
    });
  }

  it('the cost of a stream whose usage came in pieces is in its trailer', async () => {
    const { trailers, events } = await rawStream(
      `${stack.baseURL}/chat/completions`,
      { authorization: `Bearer ${KEY}` },
      { model: 'split', stream: true, messages: [{ role: 'user', content: 'go' }] },
    );
    const expected = costUsd({ inputPerMillionTokens: 1, outputPerMillionTokens: 2 }, USAGE);
    expect(Number(trailers['x-gantry-cost'])).toBeCloseTo(expected, 9);
    // Usage was not asked for: no usage chunk, and no `usage` member on the relayed chunks.
    expect(events.some((e) => 'usage' in e)).toBe(false);
  });
});
