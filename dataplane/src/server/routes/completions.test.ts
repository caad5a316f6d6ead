import { describe, expect, it, vi } from 'vitest';
import { STREAM_STATUS } from '../../pipeline/simple.ts';
import { completionsStreamEvent } from '../../providers/openai/stream.ts';
import { LegacyStreamTally, legacyStreamEnding } from './completions.ts';

describe('legacyStreamEnding: how a piped legacy stream ended', () => {
  it('is complete only with the provider end marker and the client still there', () => {
    expect(legacyStreamEnding(false, false, true)).toBe('complete');
    // A body that ended cleanly without [DONE] (an in-stream error event, a cut proxy) failed.
    expect(legacyStreamEnding(false, false, false)).toBe('failed');
    expect(legacyStreamEnding(false, true, true)).toBe('failed');
    // A client that left is billed for what was produced, whatever the provider did after.
    expect(legacyStreamEnding(true, true, false)).toBe('client_gone');
    expect(legacyStreamEnding(true, false, true)).toBe('client_gone');
  });

  it('records each ending with its own status', () => {
    expect(STREAM_STATUS).toEqual({ complete: 200, client_gone: 499, failed: 502 });
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
