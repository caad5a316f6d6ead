/**
 * The parser against a plain reading of the event-stream format (every line split at CR LF,
 * LF or CR, then fields), on random streams fed in random reads: its in-place line reading,
 * its two ways of splitting, the pieces it keeps across reads and the copies it makes of an
 * open event's lines must all agree with the plain reading.
 */
import { describe, expect, it } from 'vitest';
import { SseParser, SseTooLong, type SseEvent } from './sse.ts';

/** The format read naively, with the parser's rule that a last event without its blank line counts. */
function plainReading(stream: string): SseEvent[] {
  const lines = stream.split(/\r\n|\n|\r/);
  // A stream ending in a line break leaves an empty last piece: no line of its own.
  if (lines.at(-1) === '') lines.pop();
  lines.push('');
  const out: SseEvent[] = [];
  let event: string | undefined;
  let data: string[] | undefined;
  for (const line of lines) {
    if (line === '') {
      if (data) out.push({ event, data: data.join('\n') });
      event = undefined;
      data = undefined;
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') (data ??= []).push(value);
    else if (name === 'event') event = value;
  }
  return out;
}

/** A seeded generator, so a failure names a stream that can be replayed. */
function lcg(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

const ATOMS = [
  'data:',
  'data: ',
  'event:',
  'event: e',
  ':c',
  'x',
  'é',
  '😀',
  '\r',
  '\n',
  '\r\n',
  ' ',
  'id:1',
  'dat',
  'e',
  'data: a value long enough to be sliced',
];

const streamOf = (rnd: (n: number) => number, atoms: number): string => {
  let s = '';
  for (let k = rnd(atoms); k > 0; k--) s += ATOMS[rnd(ATOMS.length)];
  return s;
};

/** Reads of 0 to `max` characters, never splitting a surrogate pair (the UTF-8 decoder does not). */
function* readsOf(stream: string, rnd: (n: number) => number, max: number): Generator<string> {
  for (let at = 0; at < stream.length;) {
    let len = rnd(max + 1);
    const last = stream.charCodeAt(at + len - 1);
    if (len > 0 && last >= 0xd800 && last <= 0xdbff) len++;
    yield stream.slice(at, at + len);
    at += len;
  }
}

describe('the parser reads as the format says', () => {
  it('random streams in random reads give the events of the plain reading', () => {
    const rnd = lcg(12345);
    for (let t = 0; t < 20_000; t++) {
      const stream = streamOf(rnd, 30);
      const parser = new SseParser();
      const got: SseEvent[] = [];
      for (const read of readsOf(stream, rnd, 6)) got.push(...parser.push(read));
      got.push(...parser.end());
      if (JSON.stringify(got) !== JSON.stringify(plainReading(stream)))
        expect({ stream, got }).toEqual({ stream, got: plainReading(stream) });
    }
  });

  it('a small bound: every event whose data passes it fails the stream', () => {
    const rnd = lcg(54321);
    for (let t = 0; t < 10_000; t++) {
      const stream = streamOf(rnd, 40);
      const max = 6 + rnd(20);
      const parser = new SseParser(max);
      let failed = false;
      try {
        for (const read of readsOf(stream, rnd, 8)) parser.push(read);
        parser.end();
      } catch (err) {
        if (!(err instanceof SseTooLong)) throw err;
        failed = true;
      }
      // The bound counts an event's data with the LF after each line.
      const over = plainReading(stream).some((e) => Buffer.byteLength(e.data) + 1 > max);
      if (over && !failed) expect({ stream, max, failed }).toEqual({ stream, max, failed: true });
    }
  });
});
