import { describe, expect, it } from 'vitest';
import { SseParser, SseTooLong } from '../../formats/sse.ts';
import { Utf8Reads } from '../../formats/utf8-reads.ts';
import { WholeEvents } from './whole-events.ts';

/** Each read through parser and relay as the legacy route does: what is written after each. */
function pipe(reads: readonly (string | Buffer)[], max?: number): string[] {
  const parser = new SseParser();
  const decoder = new Utf8Reads();
  const whole = new WholeEvents(max);
  return reads.map((r) => {
    const read = typeof r === 'string' ? Buffer.from(r) : r;
    const text = decoder.decode(read);
    parser.push(text);
    return whole.take(read, text, parser.boundary).toString();
  });
}

const ev = (n: number): string => `data: {"choices":[{"text":"t${n}"}]}\n\n`;

describe('WholeEvents: a piped stream is written up to its last whole event', () => {
  it('a read ending on an event boundary is written at once, the same buffer', () => {
    const parser = new SseParser();
    const whole = new WholeEvents();
    const read = Buffer.from(ev(1) + ev(2));
    parser.push(read.toString());
    expect(whole.take(read, read.toString(), parser.boundary)).toBe(read);
  });

  it('each event is written by the read that completes it, whatever the reads’ cuts', () => {
    const stream =
      ev(1) + ': keep-alive\n\n' + ev(2) + 'event: x\ndata: a\ndata: b\n\n' + ev(3) + 'data: [DONE]\n\n';
    for (const size of [1, 2, 3, 7, 16, 64]) {
      const reads: string[] = [];
      for (let i = 0; i < stream.length; i += size) reads.push(stream.slice(i, i + size));
      const written = pipe(reads);
      // Nothing is held past the read that ends an event, and all of it arrives in order.
      let sent = '';
      written.forEach((w, i) => {
        sent += w;
        const seen = reads.slice(0, i + 1).join('');
        const lastEnd = seen.lastIndexOf('\n\n') + 2;
        expect(sent).toBe(seen.slice(0, lastEnd < 2 ? 0 : lastEnd));
      });
      expect(sent).toBe(stream);
    }
  });

  it('CR LF and lone CR endings: a boundary is only past the whole line ending', () => {
    expect(pipe(['data: a\r\n\r', '\ndata: b\r\n\r\n'])).toEqual(['', 'data: a\r\n\r\ndata: b\r\n\r\n']);
    expect(pipe(['data: a\r\r', 'data: b\r'])).toEqual(['', 'data: a\r\r']);
    expect(pipe(['data: a\n\ndata: b\r', '\r'])).toEqual(['data: a\n\n', '']);
  });

  it('a multi-byte character split between reads waits for its last byte', () => {
    const bytes = Buffer.from(`data: a\n\ndata: é\n\n`);
    const cut = bytes.indexOf(0xa9); // the second byte of é
    expect(pipe([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(['', bytes.toString()]);
    // Complete events before a split character: one read's delay, not more.
    const euro = Buffer.from('data: €\n\n');
    expect(pipe([Buffer.concat([euro, euro.subarray(0, 8)]), euro.subarray(8)])).toEqual([
      '',
      'data: €\n\ndata: €\n\n',
    ]);
  });

  it('an open event kept past its bound fails the stream (lines the parser does not hold)', () => {
    const comments = Array.from({ length: 10 }, () => ': ' + 'c'.repeat(20) + '\n');
    expect(() => pipe(['data: a\n', ...comments], 100)).toThrow(SseTooLong);
    expect(pipe(['data: a\n\n', ...comments.slice(0, 3)], 100)[0]).toBe('data: a\n\n');
  });
});
