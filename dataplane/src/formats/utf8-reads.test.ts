import { describe, expect, it } from 'vitest';
import { Utf8Reads } from './utf8-reads.ts';

/** Decode `bytes` cut at every position in `cuts`, as reads of a socket would arrive. */
function decodeInReads(bytes: Buffer, cuts: readonly number[]): string {
  const reads = new Utf8Reads();
  let out = '';
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out += reads.decode(bytes.subarray(from, cut));
    from = cut;
  }
  return out;
}

describe('Utf8Reads decodes a byte stream read by read', () => {
  const text = 'data: {"content":"héllo wörld 😀 ok"}\n\n';
  const bytes = Buffer.from(text);

  it('gives the text whole wherever the reads cut it, inside characters too', () => {
    for (let a = 0; a <= bytes.length; a++)
      for (let b = a; b <= bytes.length; b += 3) expect(decodeInReads(bytes, [a, b])).toBe(text);
  });

  it('gives the text whole when every byte is a read of its own', () => {
    expect(
      decodeInReads(
        bytes,
        Array.from({ length: bytes.length }, (_, i) => i),
      ),
    ).toBe(text);
  });

  it('drops a byte order mark at the start of the stream only', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(decodeInReads(Buffer.concat([bom, Buffer.from('data: x\n\n')]), [])).toBe('data: x\n\n');
    // Wherever the first reads cut the mark.
    for (const cuts of [[1], [2], [1, 2], [3], [1, 4]])
      expect(decodeInReads(Buffer.concat([bom, Buffer.from('data: x\n\n')]), cuts)).toBe('data: x\n\n');
    expect(decodeInReads(Buffer.concat([Buffer.from('a\n'), bom, Buffer.from('b\n')]), [2])).toBe(
      'a\n\ufeffb\n',
    );
  });

  it('replaces invalid bytes as the TextDecoder does', () => {
    const bad = Buffer.from([0x61, 0xff, 0x62, 0x0a]);
    expect(decodeInReads(Buffer.concat([Buffer.from('x\n'), bad]), [2])).toBe(
      new TextDecoder().decode(Buffer.concat([Buffer.from('x\n'), bad])),
    );
  });

  it('an empty read is nothing', () => {
    expect(new Utf8Reads().decode(Buffer.alloc(0))).toBe('');
  });
});
