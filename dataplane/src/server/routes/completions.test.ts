import { describe, expect, it, vi } from 'vitest';
import { SseParser } from '../../formats/sse.ts';
import { STREAM_STATUS } from '../../pipeline/simple.ts';
import { completionsStreamEvent } from '../../providers/openai/stream.ts';
import { interruption, LegacyStreamTally, legacyStreamEnding } from './completions.ts';

describe('legacyStreamEnding: how a piped legacy stream ended', () => {
  it('is complete only with the provider end marker and the client still there', () => {
    expect(legacyStreamEnding(false, true)).toBe('complete');
    // A body that ended without [DONE] (an in-stream error event, a cut proxy, a break) failed.
    expect(legacyStreamEnding(false, false)).toBe('failed');
    // A client that left is billed for what was produced, whatever the provider did after.
    expect(legacyStreamEnding(true, false)).toBe('client_gone');
    expect(legacyStreamEnding(true, true)).toBe('client_gone');
  });

  it('records each ending with its own status', () => {
    expect(STREAM_STATUS).toEqual({ complete: 200, client_gone: 499, failed: 502 });
  });
});

describe('interruption: the error event ending a failed legacy stream', () => {
  const errorOf = (piped: string): unknown => {
    const parser = new SseParser();
    const events = [...parser.push(piped), ...parser.end()];
    return (JSON.parse(events.at(-1)!.data) as { error: unknown }).error;
  };
  const oversized = {
    kind: 'oversized',
    status: 0,
    message: 'upstream sent an event-stream line longer than 8 bytes',
  } as const;

  it('is an event of its own after whole events (only those are written: WholeEvents)', () => {
    for (const piped of ['', 'data: {"a":1}\n\n', 'data: {"a":1}\r\n\r\n: ping\n\n'])
      expect(errorOf(piped + interruption(undefined))).toMatchObject({
        message: 'stream interrupted',
        type: 'upstream_error',
      });
  });

  it('names the bound when an event past it ended the stream', () => {
    expect(errorOf(interruption(oversized))).toMatchObject({
      message:
        "stream interrupted: upstream sent an event-stream line longer than 8 bytes, the gateway's bound on one streamed event",
      type: 'upstream_error',
    });
    // Worded for this route: only echo can make one on a legacy completion.
    const asked = { ...oversized, requestCause: 'echo of the prompt' };
    expect(errorOf(interruption(asked))).toMatchObject({
      message: expect.stringMatching(/\(this request's echo of the prompt can reach it\)$/) as unknown,
    });
  });
});

describe('LegacyStreamTally: what a piped legacy stream told', () => {
  const events = [
    JSON.stringify({ choices: [{ index: 0, text: 'Hel' }] }),
    JSON.stringify({ choices: [{ index: 0, text: 'lo' }] }),
    'not json',
    JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
    JSON.stringify({ error: { message: 'boom', type: 'server_error', code: 500 } }),
    '[DONE]',
  ];

  it('parses each event once and reads its usage, error and text from that one parse', () => {
    const tally = new LegacyStreamTally(completionsStreamEvent);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const data of events) tally.push(data);
      // Every event but the end marker, once each (three times each before: usage, error, text).
      expect(parse).toHaveBeenCalledTimes(events.length - 1);
    } finally {
      parse.mockRestore();
    }
    expect(tally.text).toBe('Hello');
    expect(tally.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2 });
    expect(tally.failure).toMatchObject({ kind: 'server', message: expect.stringContaining('boom') });
    expect(tally.done).toBe(true);
  });

  it('keeps the last usage and error across events that carry none', () => {
    const tally = new LegacyStreamTally(completionsStreamEvent);
    tally.push(
      JSON.stringify({ choices: [{ text: 'a' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    );
    tally.push(JSON.stringify({ choices: [{ text: 'b' }] }));
    expect(tally.usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 1 });
    expect(tally.failure).toBeUndefined();
    expect(tally.done).toBe(false);
    expect(tally.text).toBe('ab');
  });
});
