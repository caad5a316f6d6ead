/**
 * How an upstream's reads become steps of chunks: the real SSE parser and OpenAI translator
 * on a real Readable, whose every buffer is one read.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ChatChunk } from '../formats/openai/types.ts';
import { OpenAIStreamTranslator } from '../providers/openai/stream.ts';
import { readChunks } from './live-stream.ts';
import { UpstreamFailure } from './upstream.ts';

const USAGE = { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 };

const event = (body: Record<string, unknown>): string =>
  `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'm', ...body })}\n\n`;
const delta = (content: string): string =>
  event({ choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], usage: null });
const finish = event({
  choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
  usage: null,
});
const usage = event({ choices: [], usage: USAGE });
const DONE = 'data: [DONE]\n\n';

/** Every step of the stream read from `reads`, and the translator's view at the end. */
async function run(reads: readonly (string | Buffer)[], oversizedCause?: string) {
  const translator = new OpenAIStreamTranslator();
  const body = Readable.from(reads.map((r) => (typeof r === 'string' ? Buffer.from(r) : r)));
  const steps: ChatChunk[][] = [];
  for await (const step of readChunks(body, translator, oversizedCause)) steps.push(step);
  return { steps, translator };
}

const textOf = (steps: ChatChunk[][]): string =>
  steps
    .flat()
    .map((c) => c.choices[0]?.delta.content ?? '')
    .join('');

/** The bytes of `text` cut at `cuts`. */
function cut(text: string, cuts: readonly number[]): Buffer[] {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    out.push(bytes.subarray(from, at));
    from = at;
  }
  return out.filter((b) => b.length > 0);
}

describe('readChunks: one step per upstream read', () => {
  it('gives the chunks of one read together, in order, and nothing for a read without any', async () => {
    const { steps, translator } = await run([
      delta('a') + delta('b') + delta('c'),
      ': keep-alive\n\n',
      delta('d') + finish + usage + DONE,
    ]);
    // The usage chunk (no choices) is one too: the relay, not the reader, leaves it out.
    expect(steps.map((s) => s.length)).toEqual([3, 3]);
    expect(textOf(steps)).toBe('abcd');
    expect(translator.usage).toEqual(USAGE);
    expect(translator.done).toBe(true);
  });

  it('counts the usage whichever byte the reads split its event at', async () => {
    const stream = delta('hi') + finish + usage + DONE;
    const usageAt = Buffer.byteLength(delta('hi') + finish);
    for (let at = usageAt; at <= usageAt + Buffer.byteLength(usage); at++) {
      const { steps, translator } = await run(cut(stream, [at]));
      expect(translator.usage).toEqual(USAGE);
      expect(translator.finished).toBe(true);
      expect(textOf(steps)).toBe('hi');
    }
  });

  it('keeps characters split between reads whole', async () => {
    const stream = delta('héllo 😀') + finish + usage + DONE;
    const start = stream.indexOf('h');
    for (let at = start; at < start + 14; at++) {
      const { steps } = await run(cut(stream, [Buffer.byteLength(stream.slice(0, start)) + (at - start)]));
      expect(textOf(steps)).toBe('héllo 😀');
    }
  });

  it('one huge event over many reads is one chunk with all its text', async () => {
    const huge = 'x'.repeat(3_000_000);
    const stream = delta(huge) + finish + usage + DONE;
    const reads = cut(
      stream,
      Array.from({ length: Math.floor(Buffer.byteLength(stream) / 65_536) }, (_, i) => (i + 1) * 65_536),
    );
    const { steps, translator } = await run(reads);
    expect(steps.flat()).toHaveLength(3);
    expect(textOf(steps)).toBe(huge);
    expect(translator.usage).toEqual(USAGE);
  });

  it('thousands of tiny events, many to a read or a read each, all arrive', async () => {
    const words = Array.from({ length: 5000 }, (_, i) => String(i % 10));
    const events = words.map(delta);
    const together = await run([events.join(''), finish + usage + DONE]);
    expect(together.steps.map((s) => s.length)).toEqual([5000, 2]);
    expect(textOf(together.steps)).toBe(words.join(''));
    const apart = await run([...events, finish, usage, DONE]);
    expect(apart.steps).toHaveLength(5002);
    expect(textOf(apart.steps)).toBe(words.join(''));
    expect(apart.translator.usage).toEqual(USAGE);
  });

  it('an error event fails the stream after the chunks before it in the same read', async () => {
    const translator = new OpenAIStreamTranslator();
    const body = Readable.from([
      Buffer.from(delta('a') + event({ error: { message: 'overloaded' } }) + delta('never')),
    ]);
    const steps: ChatChunk[][] = [];
    const read = (async () => {
      for await (const step of readChunks(body, translator)) steps.push(step);
    })();
    await expect(read).rejects.toBeInstanceOf(UpstreamFailure);
    expect(textOf(steps)).toBe('a');
  });

  it('an upstream line that never ends fails the stream with its own kind, not the process’s memory', async () => {
    const endless = Buffer.from('x'.repeat(1024 * 1024));
    const reads = [Buffer.from(delta('a') + 'data: '), ...Array.from({ length: 17 }, () => endless)];
    // Its own kind, not a broken connection's: logs, metrics and the router say what happened.
    const failure = await run(reads).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect((failure as UpstreamFailure).upstream).toEqual({
      kind: 'oversized',
      status: 0,
      message: 'upstream sent an event-stream line longer than 16777216 bytes',
    });
    // What of the request may have asked for it travels with it (the router then stops).
    const asked = await run(reads, 'echo').catch((err: unknown) => err);
    expect((asked as UpstreamFailure).upstream.requestCause).toBe('echo');
  });

  it('a stream that ends before the answer did fails', async () => {
    await expect(run([delta('a')])).rejects.toThrow('ended before the answer was complete');
  });
});
