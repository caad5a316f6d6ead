import { describe, expect, it } from 'vitest';
import {
  DATA_LINE_OVERHEAD,
  MAX_SSE_BYTES,
  SseParser,
  SseTooLong,
  sseData,
  sseEvent,
  type SseEvent,
} from './sse.ts';

/** Feed `pieces` one by one, then end: every event, in order. */
function parse(pieces: readonly string[]): SseEvent[] {
  const p = new SseParser();
  const out: SseEvent[] = [];
  for (const piece of pieces) out.push(...p.push(piece));
  out.push(...p.end());
  return out;
}

const ev = (data: string, event?: string): SseEvent => ({ event, data });

const OPENAI_LIKE = [
  ': keep-alive comment\n',
  'data: {"id":"1","choices":[{"delta":{"content":"Hel"}}]}\n\n',
  'data: {"id":"1","choices":[{"delta":{"content":"lo"}}]}\n\n',
  'data: [DONE]\n\n',
].join('');

const ANTHROPIC_LIKE = [
  'event: message_start\r\n',
  'data: {"type":"message_start"}\r\n',
  '\r\n',
  ':ping\r\n',
  'event: content_block_delta\r\n',
  'data: {"type":"content_block_delta",\r\n',
  'data: "text":"é😀"}\r\n',
  '\r\n',
  'event: message_stop\r\n',
  'data: {}\r\n',
  '\r\n',
].join('');

/** Lines ended by lone CRs, CR LF and LF, mixed, and blank lines made of each. */
const MIXED = [
  'event: a\r',
  'data: 1\n',
  'data: 2\r\n',
  '\r',
  ': c\r\n',
  'data: 3\r\r\n',
  'data: 4\n\r',
  'data: 5\r\n\n',
  'data: é😀\r\r',
].join('');

const EXPECTED_MIXED = [ev('1\n2', 'a'), ev('3'), ev('4'), ev('5'), ev('é😀')];

const EXPECTED_OPENAI = [
  ev('{"id":"1","choices":[{"delta":{"content":"Hel"}}]}'),
  ev('{"id":"1","choices":[{"delta":{"content":"lo"}}]}'),
  ev('[DONE]'),
];
const EXPECTED_ANTHROPIC = [
  ev('{"type":"message_start"}', 'message_start'),
  ev('{"type":"content_block_delta",\n"text":"é😀"}', 'content_block_delta'),
  ev('{}', 'message_stop'),
];

/** mulberry32 */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('SseParser: chunking never changes the events', () => {
  for (const [name, stream, expected] of [
    ['LF stream', OPENAI_LIKE, EXPECTED_OPENAI],
    ['CRLF stream', ANTHROPIC_LIKE, EXPECTED_ANTHROPIC],
    ['CR stream', OPENAI_LIKE.replaceAll('\n', '\r'), EXPECTED_OPENAI],
    ['mixed line ends', MIXED, EXPECTED_MIXED],
  ] as const) {
    describe(name, () => {
      it('whole', () => {
        expect(parse([stream])).toEqual(expected);
      });

      it('one character at a time', () => {
        expect(parse([...stream])).toEqual(expected);
      });

      it('one UTF-16 code unit at a time (even splitting surrogate pairs)', () => {
        expect(parse(stream.split(''))).toEqual(expected);
      });

      it('every split into two pieces', () => {
        for (let i = 0; i <= stream.length; i++) {
          expect(parse([stream.slice(0, i), stream.slice(i)]), `split at ${i}`).toEqual(expected);
        }
      });

      it('every split into three pieces', () => {
        for (let i = 0; i <= stream.length; i++) {
          for (let j = i; j <= stream.length; j++) {
            const events = parse([stream.slice(0, i), stream.slice(i, j), stream.slice(j)]);
            if (JSON.stringify(events) !== JSON.stringify(expected)) {
              expect(events, `split at ${i}, ${j}`).toEqual(expected);
            }
          }
        }
      });

      it('random chunkings, including empty pieces', () => {
        const random = seeded(stream.length);
        for (let round = 0; round < 300; round++) {
          const pieces: string[] = [];
          let at = 0;
          while (at < stream.length) {
            const len = Math.floor(random() * 12);
            pieces.push(stream.slice(at, at + len));
            at += len;
          }
          expect(parse(pieces)).toEqual(expected);
        }
      });
    });
  }

  it('events come out as soon as their blank line arrives, not later', () => {
    const p = new SseParser();
    expect(p.push('data: a\n')).toEqual([]);
    expect(p.push('\n')).toEqual([ev('a')]);
    // A CR ends the blank line at once; the LF that follows it in the next read is part of it.
    expect(p.push('data: b\r\n\r')).toEqual([ev('b')]);
    expect(p.push('\n')).toEqual([]);
    expect(p.end()).toEqual([]);
  });
});

describe('SseParser: line ends', () => {
  it('a lone CR ends a line, and two of them an event', () => {
    expect(parse(['data: a\rdata: b\r\rdata: c\r\r'])).toEqual([ev('a\nb'), ev('c')]);
  });

  it('a CR ending one read and an LF opening the next are one line end, not a blank line', () => {
    expect(parse(['data: a\r', '\ndata: b\r\n\r\n'])).toEqual([ev('a\nb')]);
    // Empty reads in between change nothing.
    expect(parse(['data: a\r', '', '', '\ndata: b\r\n', '\r', '', '\n'])).toEqual([ev('a\nb')]);
    // Only one LF is part of that line end: a second one is a blank line.
    expect(parse(['data: a\r', '\n\ndata: b\n\n'])).toEqual([ev('a'), ev('b')]);
  });

  it('a CR ending one read and a CR opening the next are two line ends', () => {
    expect(parse(['data: a\r', '\rdata: b\n\n'])).toEqual([ev('a'), ev('b')]);
  });

  it('an LF is skipped only right after the CR, not later in the stream', () => {
    const p = new SseParser();
    expect(p.push('data: a\r')).toEqual([]);
    expect(p.push('data: b\n')).toEqual([]);
    expect(p.push('\n')).toEqual([ev('a\nb')]);
  });

  it('a line kept across reads ends at a CR too', () => {
    expect(parse(['da', 'ta: lo', 'ng\r', '\r\n'])).toEqual([ev('long')]);
  });
});

describe('SseParser: fields', () => {
  it('comments are ignored, also between the lines of one event', () => {
    expect(parse([':c1\ndata: a\n: c2\ndata: b\n\n'])).toEqual([ev('a\nb')]);
  });

  it('a comment alone is no event', () => {
    expect(parse([': only a comment\n\n'])).toEqual([]);
  });

  it('multi-line data joins with LF', () => {
    expect(parse(['data: one\ndata: two\ndata: three\n\n'])).toEqual([ev('one\ntwo\nthree')]);
  });

  it('exactly one space after the colon is removed, no more', () => {
    expect(parse(['data:x\n\ndata: x\n\ndata:  x\n\n'])).toEqual([ev('x'), ev('x'), ev(' x')]);
  });

  it('colons inside the value are kept', () => {
    expect(parse(['data: {"a":"b:c"}\n\n'])).toEqual([ev('{"a":"b:c"}')]);
  });

  it('the event name applies to its own event only', () => {
    expect(parse(['event: first\ndata: 1\n\ndata: 2\n\n'])).toEqual([ev('1', 'first'), ev('2')]);
  });

  it('the last event name of a block wins', () => {
    expect(parse(['event: a\nevent: b\ndata: x\n\n'])).toEqual([ev('x', 'b')]);
  });

  it('an event name without data dispatches nothing and does not leak into the next event', () => {
    expect(parse(['event: ping\n\ndata: x\n\n'])).toEqual([ev('x')]);
  });

  it('id, retry and unknown fields are ignored', () => {
    expect(parse(['id: 7\nretry: 100\nfoo: bar\ndata: x\n\n'])).toEqual([ev('x')]);
  });

  it('field names match whole: longer or shorter names are unknown fields', () => {
    expect(parse(['datum: a\ndat: b\neventual: c\nevents: d\ndata: x\n\n'])).toEqual([ev('x')]);
    expect(parse(['event\ndata:\n\n'])).toEqual([ev('', '')]);
  });

  it('a field name without a colon is a field with an empty value', () => {
    expect(parse(['data\ndata: x\n\n'])).toEqual([ev('\nx')]);
  });

  it('blank lines between events produce nothing extra', () => {
    expect(parse(['\n\n\ndata: a\n\n\n\ndata: b\n\n\n'])).toEqual([ev('a'), ev('b')]);
  });
});

describe('SseParser: end of input', () => {
  it('flushes a last event that lacks its blank line', () => {
    expect(parse(['data: a\n\ndata: last\n'])).toEqual([ev('a'), ev('last')]);
  });

  it('flushes a last line that lacks even its newline', () => {
    expect(parse(['event: e\ndata: tail'])).toEqual([ev('tail', 'e')]);
    expect(parse(['data: tail\r'])).toEqual([ev('tail')]);
  });

  it('nothing pending → nothing flushed; end twice is harmless', () => {
    const p = new SseParser();
    expect(p.push('data: a\n\n')).toEqual([ev('a')]);
    expect(p.end()).toEqual([]);
    expect(p.end()).toEqual([]);
  });

  it('a dangling comment or event name is not an event', () => {
    expect(parse([': bye'])).toEqual([]);
    expect(parse(['event: x\n'])).toEqual([]);
  });
});

describe('SseParser: long lines and the bound on them', () => {
  it('a line spanning many reads is read whole, its CR LF split between reads too', () => {
    const value = 'y'.repeat(1 << 20);
    const stream = `data: ${value}\r\n\r\ndata: z\n\n`;
    const pieces: string[] = [];
    for (let at = 0; at < stream.length; at += 16 * 1024 + 1)
      pieces.push(stream.slice(at, at + 16 * 1024 + 1));
    expect(parse(pieces)).toEqual([ev(value), ev('z')]);
    const cr = stream.indexOf('\r');
    expect(parse([stream.slice(0, cr + 1), stream.slice(cr + 1)])).toEqual([ev(value), ev('z')]);
  });

  it('a line up to the bound is read, one byte more fails as the upstream’s fault', () => {
    const at = (n: number) => new SseParser(n);
    expect(at(10).push('data: 1234\n\n')).toEqual([ev('1234')]);
    expect(() => at(10).push('data: 12345')).toThrow(SseTooLong);
    expect(() => at(10).push('data: 12345')).toThrow(
      'upstream sent an event-stream line longer than 10 bytes',
    );
  });

  it('an endless line fails once past the bound, however it is cut, without waiting for its end', () => {
    const p = new SseParser(1000);
    expect(() => {
      for (let i = 0; i < 100; i++) p.push('data: ' + 'x'.repeat(97));
    }).toThrow(SseTooLong);
    const q = new SseParser(1000);
    expect(() => q.push('data: a\n\n' + 'x'.repeat(1001))).toThrow(SseTooLong);
  });

  it('an event of many short data lines is bounded too', () => {
    const p = new SseParser(1000);
    expect(() => {
      for (let i = 0; i < 100; i++) p.push('data: ' + 'x'.repeat(20) + '\n');
    }).toThrow('upstream sent an event-stream event longer than 1000 bytes');
    // The count starts again with each event.
    const q = new SseParser(1000);
    for (let i = 0; i < 100; i++) expect(q.push('data: ' + 'x'.repeat(20) + '\n\n')).toHaveLength(1);
  });

  it('the bound is in the upstream’s bytes: 3-byte characters fill it at a third of the length', () => {
    expect(new SseParser(30).push('data: ' + '€'.repeat(8))).toEqual([]);
    expect(() => new SseParser(30).push('data: ' + '€'.repeat(9))).toThrow(
      'upstream sent an event-stream line longer than 30 bytes',
    );
    // 4-byte characters (two UTF-16 code units each).
    expect(new SseParser(30).push('data: ' + '😀'.repeat(6))).toEqual([]);
    expect(() => new SseParser(30).push('data: ' + '😀'.repeat(7))).toThrow(SseTooLong);
  });

  it('a line is counted exactly across reads once it could pass the bound', () => {
    const p = new SseParser(300);
    p.push('data: ' + 'x'.repeat(94)); // 100 bytes, below a third of the bound: not counted yet
    p.push('é'.repeat(50)); // 200
    p.push('é'.repeat(50)); // 300: at the bound
    expect(() => p.push('x')).toThrow(SseTooLong);
  });

  it('an event’s data is counted in bytes, its earlier lines included, each after the first charged its overhead', () => {
    const p = new SseParser(400);
    const line = 'data: ' + 'é'.repeat(40) + '\n'; // 80 bytes of data and its LF
    for (let i = 0; i < 3; i++) expect(p.push(line)).toEqual([]); // 81 + 2 × (81 + 32) = 307
    expect(p.push('data: ' + 'x'.repeat(60) + '\n')).toEqual([]); // 307 + 61 + 32 = 400
    expect(() => p.push('data:\n')).toThrow('upstream sent an event-stream event longer than 400 bytes');
  });

  it('an event of many empty data lines fails at the bound: each line after the first costs DATA_LINE_OVERHEAD', () => {
    // Counted by bytes alone, 16.7M empty lines (96 MB sent) passed and held ~170 MB.
    const p = new SseParser();
    const perLine = 1 + DATA_LINE_OVERHEAD;
    const lines = Math.floor((MAX_SSE_BYTES - 1) / perLine) + 1; // the first costs 1
    const read = 'data:\n'.repeat(1000);
    let sent = 0;
    expect(() => {
      for (; sent < lines; sent += 1000) p.push(read);
    }).toThrow('upstream sent an event-stream event longer than 16777216 bytes');
    // It failed within the read that passed the bound, not before.
    expect(sent).toBeGreaterThan(lines - 1000);
    expect(sent).toBeLessThanOrEqual(lines);
  });

  it('a one-line event is bounded by its bytes alone, and an event of many lines still reads whole', () => {
    expect(new SseParser(10).push('data: 12345678\n\n')).toEqual([ev('12345678')]);
    const p = new SseParser(1000);
    expect(p.push('data: a\ndata:\ndata: b\n\n')).toEqual([ev('a\n\nb')]);
  });

  it('at the default bound, an endless line of 3-byte characters fails after 16 MiB, not 48', () => {
    const p = new SseParser();
    const read = '€'.repeat(21_845); // 65,535 bytes, a typical read
    p.push('data: ');
    let bytes = 6;
    expect(() => {
      for (;;) {
        p.push(read);
        bytes += Buffer.byteLength(read);
      }
    }).toThrow(SseTooLong);
    expect(bytes).toBeLessThanOrEqual(MAX_SSE_BYTES);
    expect(bytes + Buffer.byteLength(read)).toBeGreaterThan(MAX_SSE_BYTES);
  });

  it('the default bound leaves room for a large streamed image', () => {
    expect(MAX_SSE_BYTES).toBe(16 * 1024 * 1024);
    const image = 'A'.repeat(8 * 1024 * 1024);
    expect(parse([`data: ${image}\n\n`])[0]?.data.length).toBe(image.length);
  });
});

describe('encoding', () => {
  it('sseData and sseEvent produce what the parser reads back', () => {
    expect(sseData('{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(sseEvent('ping', '{}')).toBe('event: ping\ndata: {}\n\n');
    expect(parse([sseData('x'), sseEvent('e', 'y'), sseData('[DONE]')])).toEqual([
      ev('x'),
      ev('y', 'e'),
      ev('[DONE]'),
    ]);
  });
});
