import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatChunk, ChunkChoice, Usage } from '../formats/openai/types.ts';
import type { StreamTranslator, UpstreamError } from '../providers/types.ts';
import type { LiveStream } from '../router/live-stream.ts';
import type { AttemptLog, Routed } from '../router/router.ts';
import { testDeployment, testTarget } from '../router/testing.ts';
import { UpstreamFailure } from '../router/upstream.ts';
import { relayStream, type Continue, type StreamEnd, type StreamMeta } from './stream-relay.ts';

const dep = (name: string): Deployment =>
  testDeployment({
    name,
    model: 'served-model',
    provider: 'anthropic',
    target: testTarget({ provider: 'anthropic', prefill: true }),
    capabilities: new Set(['chat', 'streaming', 'prefill']),
  });

const META: StreamMeta = { id: 'chatcmpl-gw', created: 1_700_000_000, model: 'client-model' };

let upstreamSeq = 0;
/** An upstream chunk with its own id/model/created, as a provider sends it. */
const chunk = (
  delta: ChunkChoice['delta'],
  finish: ChunkChoice['finish_reason'] = null,
  usage?: Usage,
): ChatChunk => ({
  id: `upstream-${++upstreamSeq}`,
  object: 'chat.completion.chunk',
  created: 42,
  model: 'upstream-model-2025',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...(usage ? { usage } : {}),
});
const role = () => chunk({ role: 'assistant', content: '' });
const say = (text: string) => chunk({ content: text });
const toolDelta = () =>
  chunk({
    tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"q' } }],
  });
const usageOnly = (usage: Usage): ChatChunk => ({
  id: 'u',
  object: 'chat.completion.chunk',
  created: 42,
  model: 'upstream-model-2025',
  choices: [],
  usage,
});

const USAGE: Usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const DIED: UpstreamError = { kind: 'network', status: 0, message: 'upstream stream broke (ECONNRESET)' };

/** Steps of the rest of a stream: a chunk, or an error the upstream dies with. */
type Step = ChatChunk | ChatChunk[] | UpstreamError;
const isError = (s: Step): s is UpstreamError => !Array.isArray(s) && 'kind' in s;

interface Fake {
  routed: Routed<LiveStream>;
  cancelled: () => number;
}

function live(
  name: string,
  head: ChatChunk[],
  rest: Step[],
  opts: { usage?: Usage; log?: AttemptLog } = {},
): Fake {
  let cancels = 0;
  // One upstream read per step; an array step is several chunks decoded from one read.
  async function* gen(): AsyncGenerator<ChatChunk[], void> {
    for (const step of rest) {
      await Promise.resolve();
      if (isError(step)) throw new UpstreamFailure(step);
      yield Array.isArray(step) ? step : [step];
    }
  }
  const translator: StreamTranslator = {
    push: () => [],
    done: false,
    finished: false,
    usage: opts.usage,
    error: undefined,
    skipped: 0,
  };
  return {
    routed: {
      value: { head, rest: gen(), translator, cancel: () => void cancels++ },
      deployment: dep(name),
      log: opts.log ?? { attempts: 1, failed: [] },
      claim: { probe: false, epoch: 0 },
    },
    cancelled: () => cancels,
  };
}

/** Run the relay to its end: the chunks the client got, how they were grouped, and the outcome. */
async function drain(first: Routed<LiveStream>, continueWith: Continue = async () => undefined) {
  const relay = relayStream(first, META, continueWith, new AbortController().signal);
  const chunks: ChatChunk[] = [];
  const batches: number[] = [];
  for (;;) {
    const step = await relay.next();
    if (step.done) return { chunks, batches, end: step.value };
    chunks.push(...step.value);
    batches.push(step.value.length);
  }
}

const textOf = (chunks: ChatChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

function recorder(answers: (Routed<LiveStream> | undefined)[]) {
  const calls: { partial: string; failed: string }[] = [];
  const continueWith: Continue = async (partial, failed) => {
    calls.push({ partial, failed: failed.name });
    return answers.shift();
  };
  return { calls, continueWith };
}

function expectComplete(end: StreamEnd): asserts end is Extract<StreamEnd, { outcome: 'complete' }> {
  expect(end.outcome).toBe('complete');
}
function expectFailed(end: StreamEnd): asserts end is Extract<StreamEnd, { outcome: 'failed' }> {
  expect(end.outcome).toBe('failed');
}

describe('a stream that completes', () => {
  it('relays head then rest, and ends complete with the translator’s usage', async () => {
    const a = live('a', [role(), say('Hel')], [say('lo'), chunk({}, 'stop')], {
      usage: USAGE,
      log: { attempts: 2, failed: ['x'] },
    });
    const { chunks, end } = await drain(a.routed);
    expect(textOf(chunks)).toBe('Hello');
    expect(chunks).toHaveLength(4);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expectComplete(end);
    expect(end.usage).toBe(USAGE);
    expect(end.text).toBe('Hello');
    expect(end.deployment?.name).toBe('a');
    expect(end.log).toEqual({ attempts: 2, failed: ['x'] });
    expect(a.cancelled()).toBe(0);
  });

  it('one id, created and model for every chunk (the gateway’s, not the upstream’s)', async () => {
    const a = live('a', [role(), say('a')], [say('b'), chunk({}, 'stop')]);
    const { chunks } = await drain(a.routed);
    for (const c of chunks) {
      expect(c.id).toBe(META.id);
      expect(c.created).toBe(META.created);
      expect(c.model).toBe(META.model);
      expect(c.object).toBe('chat.completion.chunk');
    }
  });

  it('usage is stripped from chunks and usage-only chunks are dropped (the encoder sends it once)', async () => {
    const a = live('a', [role(), say('x')], [chunk({ content: 'y' }, 'stop', USAGE), usageOnly(USAGE)], {
      usage: USAGE,
    });
    const { chunks, end } = await drain(a.routed);
    expect(chunks).toHaveLength(3);
    for (const c of chunks) expect(JSON.stringify(c)).not.toContain('"usage"');
    expect(textOf(chunks)).toBe('xy');
    expectComplete(end);
    expect(end.usage).toBe(USAGE);
  });

  it('relays the chunks of one upstream read together, as one step (one write to the client)', async () => {
    const a = live(
      'a',
      [role(), say('He')],
      [[say('l'), say('l'), say('o')], [chunk({}, 'stop'), usageOnly(USAGE)], [usageOnly(USAGE)]],
      { usage: USAGE },
    );
    const { chunks, batches, end } = await drain(a.routed);
    // The head is one step; a read of only a usage chunk has nothing for the client: no step.
    expect(batches).toEqual([2, 3, 1]);
    expect(textOf(chunks)).toBe('Hello');
    expectComplete(end);
    expect(end.finishReason).toBe('stop');
  });

  it('relays each chunk with the stream’s id/created/model, members in the order a copy would have', async () => {
    // Wire bytes: what `{...rest, id, created, model}` without usage serialises to.
    const asCopy = (c: ChatChunk): string => {
      const { usage: _usage, ...rest } = structuredClone(c);
      return JSON.stringify({ ...rest, id: META.id, created: META.created, model: META.model });
    };
    const withUsageInside = { ...say('a'), usage: USAGE, system_fingerprint: 'fp' } as ChatChunk;
    const { id: _id, created: _created, ...withoutId } = say('b');
    const upstream = [withUsageInside, withoutId as ChatChunk, chunk({}, 'stop')];
    const expected = upstream.map(asCopy);
    const { chunks } = await drain(live('a', [upstream[0]!], upstream.slice(1)).routed);
    expect(chunks.map((c) => JSON.stringify(c))).toEqual(expected);
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
  });

  it('an OpenAI chunk (usage:null before obfuscation) keeps its bytes and stays a fast-properties object', async () => {
    // A chunk in dictionary mode serialises slower than a copy would; `delete` of a member that
    // is not the last one puts it there, which is what OpenAI's current shape made the relay do.
    setFlagsFromString('--allow-natives-syntax');
    const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
    const openai = (text: string): ChatChunk =>
      JSON.parse(
        `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":42,"model":"gpt-4o-2024-08-06",` +
          `"service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"${text}"},` +
          `"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Kx9a"}`,
      ) as ChatChunk;
    const { chunks } = await drain(live('a', [openai('a')], [openai('b'), chunk({}, 'stop')]).routed);
    expect(JSON.stringify(chunks[0])).toBe(
      `{"id":"chatcmpl-gw","object":"chat.completion.chunk","created":1700000000,"model":"client-model",` +
        `"service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"a"},` +
        `"logprobs":null,"finish_reason":null}],"obfuscation":"Kx9a"}`,
    );
    expect(chunks.slice(0, 2).map(hasFastProperties)).toEqual([true, true]);
  });

  it('the first stream’s own role chunk is kept', async () => {
    const { chunks } = await drain(live('a', [role()], [say('x'), chunk({}, 'stop')]).routed);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
  });

  it('does not mutate the routed attempt log', async () => {
    const log = { attempts: 1, failed: [] as string[] };
    const a = live('a', [say('Hel')], [DIED], { log });
    const b = live('b', [say('lo')], [chunk({}, 'stop')], { log: { attempts: 1, failed: [] } });
    await drain(a.routed, recorder([b.routed]).continueWith);
    expect(log).toEqual({ attempts: 1, failed: [] });
  });
});

describe('a stream that dies after text', () => {
  it('is continued on a fallback with the partial text; the continuation’s role chunk is dropped', async () => {
    const a = live('a', [role(), say('Hel')], [say('lo'), DIED]);
    const b = live('b', [role(), say(' wor')], [say('ld'), chunk({}, 'stop')], {
      usage: USAGE,
      log: { attempts: 2, failed: ['c'] },
    });
    const { calls, continueWith } = recorder([b.routed]);
    const { chunks, end } = await drain(a.routed, continueWith);

    expect(calls).toEqual([{ partial: 'Hello', failed: 'a' }]);
    expect(a.cancelled()).toBe(1);
    expect(textOf(chunks)).toBe('Hello world');
    // One role chunk only: the first stream's.
    expect(chunks.filter((c) => c.choices[0]!.delta.role !== undefined)).toHaveLength(1);
    expect(chunks.every((c) => c.id === META.id && c.model === META.model)).toBe(true);
    expectComplete(end);
    expect(end.text).toBe('Hello world');
    expect(end.deployment?.name).toBe('b');
    expect(end.usage).toBe(USAGE);
    expect(end.log).toEqual({ attempts: 3, failed: ['a', 'c'] });
  });

  it('a continuation’s first chunk carrying text along with the role is kept', async () => {
    const a = live('a', [say('Hel')], [DIED]);
    const b = live('b', [chunk({ role: 'assistant', content: 'lo' })], [chunk({}, 'stop')]);
    const { chunks } = await drain(a.routed, recorder([b.routed]).continueWith);
    expect(textOf(chunks)).toBe('Hello');
  });

  it('a continuation’s opening reasoning chunk is not mistaken for a role chunk', async () => {
    const a = live('a', [say('Hel')], [DIED]);
    const b = live(
      'b',
      [role(), chunk({ reasoning_content: 'continuing the word' })],
      [say('lo'), chunk({}, 'stop')],
    );
    const { chunks } = await drain(a.routed, recorder([b.routed]).continueWith);
    expect(chunks.some((c) => c.choices[0]!.delta.reasoning_content === 'continuing the word')).toBe(true);
  });

  it('a continuation’s head drops role-only chunks before its first token only, however the reads split', async () => {
    // A signature-only delta after the token, in the same read as the token: part of the answer.
    const signature = () => chunk({ role: 'assistant' });
    const a = live('a', [say('Hel')], [DIED]);
    const b = live('b', [role(), say('lo'), signature()], [chunk({}, 'stop')]);
    const { chunks } = await drain(a.routed, recorder([b.routed]).continueWith);
    expect(chunks).toHaveLength(4);
    expect(chunks[1]!.choices[0]!.delta).toEqual({ content: 'lo' });
    expect(chunks[2]!.choices[0]!.delta).toEqual({ role: 'assistant' });
  });

  it('the rest of a continuation is not filtered: its later role-only chunks pass', async () => {
    const a = live('a', [say('Hel')], [DIED]);
    const b = live('b', [say('lo')], [role(), chunk({}, 'stop')]);
    const { chunks } = await drain(a.routed, recorder([b.routed]).continueWith);
    expect(chunks).toHaveLength(4);
  });

  it('a continuation that dies too is continued again, with all text so far and the failed deployments once each', async () => {
    const a = live('a', [say('A')], [DIED]);
    const b = live('b', [say('B')], [DIED], { log: { attempts: 1, failed: ['a'] } });
    const c = live('c', [say('C')], [chunk({}, 'stop')], { log: { attempts: 1, failed: [] } });
    const { calls, continueWith } = recorder([b.routed, c.routed]);
    const { end } = await drain(a.routed, continueWith);
    expect(calls).toEqual([
      { partial: 'A', failed: 'a' },
      { partial: 'AB', failed: 'b' },
    ]);
    expectComplete(end);
    expect(end.text).toBe('ABC');
    expect(end.deployment?.name).toBe('c');
    expect(end.log).toEqual({ attempts: 3, failed: ['a', 'b'] });
    expect(b.cancelled()).toBe(1);
  });

  it('with no deployment to continue on, it ends failed: never passed off as complete', async () => {
    const a = live('a', [role(), say('Hel')], [say('lo'), DIED], { usage: USAGE });
    const { calls, continueWith } = recorder([undefined]);
    const { chunks, end } = await drain(a.routed, continueWith);
    expect(calls).toHaveLength(1);
    expect(textOf(chunks)).toBe('Hello');
    expect(chunks.some((c) => c.choices[0]!.finish_reason !== null)).toBe(false);
    expectFailed(end);
    expect(end.error).toEqual(DIED);
    expect(end.text).toBe('Hello');
    expect(end.deployment?.name).toBe('a');
    expect(end.log).toEqual({ attempts: 1, failed: ['a'] });
    expect(a.cancelled()).toBe(1);
  });

  it('a stall (timeout) is handled like a death', async () => {
    const stall: UpstreamError = { kind: 'timeout', status: 0, message: 'upstream stream stalled' };
    const a = live('a', [say('Hel')], [stall]);
    const { end } = await drain(a.routed);
    expectFailed(end);
    expect(end.error.kind).toBe('timeout');
  });
});

describe('deaths that are not continued', () => {
  it('during a tool call: failed, without asking for a continuation', async () => {
    const a = live('a', [role(), say('Let me check.'), toolDelta()], [DIED]);
    const { calls, continueWith } = recorder([live('b', [say('x')], []).routed]);
    const { end } = await drain(a.routed, continueWith);
    expect(calls).toEqual([]);
    expectFailed(end);
    expect(end.error).toEqual(DIED);
    expect(end.log.failed).toEqual(['a']);
    // The call it sent so far is on its part, to be billed.
    expect(end.parts[0]?.toolCallText).toBe('get{"q');
  });

  it('before any text: failed (there is nothing to prefill)', async () => {
    const a = live('a', [role(), chunk({ reasoning_content: 'hmm' })], [DIED]);
    const { calls, continueWith } = recorder([]);
    const { end } = await drain(a.routed, continueWith);
    expect(calls).toEqual([]);
    expectFailed(end);
  });

  it('after finish_reason: complete (only the end marker or usage was lost)', async () => {
    const a = live('a', [say('Done.')], [chunk({}, 'stop'), DIED], { usage: undefined });
    const { calls, continueWith } = recorder([]);
    const { end } = await drain(a.routed, continueWith);
    expect(calls).toEqual([]);
    expectComplete(end);
    expect(end.text).toBe('Done.');
    expect(end.usage).toBeUndefined();
    expect(end.log.failed).toEqual([]);
    expect(a.cancelled()).toBe(1);
  });

  it('after a tool call finished (finish_reason tool_calls): complete', async () => {
    const a = live('a', [toolDelta()], [chunk({}, 'tool_calls'), DIED]);
    const { end } = await drain(a.routed);
    expectComplete(end);
  });

  it('an error that is not an upstream failure propagates', async () => {
    const a = live('a', [say('x')], []);
    async function* broken(): AsyncGenerator<ChatChunk[], void> {
      await Promise.resolve();
      throw new TypeError('translator bug');
    }
    a.routed.value.rest = broken();
    await expect(drain(a.routed)).rejects.toThrow('translator bug');
  });
});

describe('the parts of a stream (who contributed what, for the bill)', () => {
  it('a stream that was not continued is one part: its deployment, all the text, the provider usage', async () => {
    const a = live('a', [role(), say('Hel')], [say('lo'), chunk({}, 'stop')], { usage: USAGE });
    const { end } = await drain(a.routed);
    expect(end.parts).toEqual([
      {
        deployment: a.routed.deployment,
        prefix: '',
        text: 'Hello',
        toolCallText: '',
        usage: USAGE,
        cut: false,
      },
    ]);
  });

  it('a continued stream has a cut part and the continuation, each with its own text and usage', async () => {
    const early: Usage = { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 };
    const a = live('a', [role(), say('Hel')], [say('lo'), DIED], { usage: early });
    const b = live('b', [role(), say(' wor')], [say('ld'), chunk({}, 'stop')], { usage: USAGE });
    const { end } = await drain(a.routed, recorder([b.routed]).continueWith);
    expectComplete(end);
    expect(end.parts).toEqual([
      {
        deployment: a.routed.deployment,
        prefix: '',
        text: 'Hello',
        toolCallText: '',
        usage: early,
        cut: true,
      },
      {
        deployment: b.routed.deployment,
        prefix: 'Hello',
        text: ' world',
        toolCallText: '',
        usage: USAGE,
        cut: false,
      },
    ]);
    // The parts' texts are exactly what the client received, in order.
    expect(end.parts.map((p) => p.text).join('')).toBe(end.text);
  });

  it('a continuation that is cut too leaves three parts, the prefix growing each time', async () => {
    const a = live('a', [say('A')], [DIED]);
    const b = live('b', [say('B')], [DIED]);
    const c = live('c', [say('C')], [chunk({}, 'stop')], { usage: USAGE });
    const { end } = await drain(a.routed, recorder([b.routed, c.routed]).continueWith);
    expect(end.parts.map((p) => [p.deployment.name, p.prefix, p.text, p.cut])).toEqual([
      ['a', '', 'A', true],
      ['b', 'A', 'B', true],
      ['c', 'AB', 'C', false],
    ]);
  });

  it('a stream that fails with nobody to continue it keeps its cut part', async () => {
    const a = live('a', [say('Hel')], [DIED]);
    const { end } = await drain(a.routed, recorder([undefined]).continueWith);
    expectFailed(end);
    expect(end.parts).toHaveLength(1);
    expect(end.parts[0]).toMatchObject({ text: 'Hel', cut: true });
  });
});
