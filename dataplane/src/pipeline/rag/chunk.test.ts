import { describe, expect, it } from 'vitest';
import { chunkOptions, chunkText, MAX_CHUNKS_PER_DOCUMENT, normaliseText } from './chunk.ts';

const para = (word: string, n: number) => Array.from({ length: n }, () => word).join(' ') + '.';

describe('chunkText', () => {
  it('keeps a short document whole', () => {
    expect(chunkText('Hello world.', { maxChars: 100, overlap: 0 })).toEqual([
      { index: 0, text: 'Hello world.', start: 0, end: 12 },
    ]);
  });

  it('ends chunks at paragraph breaks when one lies in the second half of the window', () => {
    const a = para('alpha', 20);
    const b = para('beta', 20);
    const chunks = chunkText(`${a}\n\n${b}`, { maxChars: 200, overlap: 0 });
    expect(chunks.map((c) => c.text)).toEqual([a, b]);
  });

  it('falls back to sentence and word breaks, never exceeding the window', () => {
    const text = Array.from({ length: 50 }, (_, i) => `Sentence number ${i} is here.`).join(' ');
    const chunks = chunkText(text, { maxChars: 120, overlap: 0 });
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(120);
      expect(c.text.endsWith('.')).toBe(true);
    }
    expect(chunks.map((c) => c.text).join(' ')).toBe(text);
  });

  it('cuts a run without breaks at the window', () => {
    const chunks = chunkText('x'.repeat(250), { maxChars: 100, overlap: 0 });
    expect(chunks.map((c) => c.text.length)).toEqual([100, 100, 50]);
  });

  it('overlaps chunks from a word start, and always moves forward', () => {
    const text = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    const chunks = chunkText(text, { maxChars: 100, overlap: 30 });
    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1]!;
      const cur = chunks[i]!;
      expect(cur.start).toBeGreaterThan(prev.start);
      expect(cur.start).toBeLessThan(prev.end);
      expect(text[cur.start - 1]).toBe(' ');
    }
    expect(chunks.at(-1)!.end).toBe(text.length);
  });

  it('normalises line endings and blank runs, and yields nothing for blank text', () => {
    expect(normaliseText('a \r\n\r\n\r\n\r\nb')).toBe('a\n\nb');
    expect(chunkText(' \n\n \t ')).toEqual([]);
  });

  it('refuses a document that would make too many chunks', () => {
    expect(() =>
      chunkText('x'.repeat(100 * (MAX_CHUNKS_PER_DOCUMENT + 2)), { maxChars: 100, overlap: 0 }),
    ).toThrow(/more than/);
  });

  it('checks the options', () => {
    expect(chunkOptions(undefined, undefined)).toEqual({ maxChars: 1000, overlap: 200 });
    expect(chunkOptions('400', undefined)).toEqual({ maxChars: 400, overlap: 100 });
    expect(() => chunkOptions(50, 0)).toThrow(/chunk_size/);
    expect(() => chunkOptions(200, 101)).toThrow(/chunk_overlap/);
    expect(() => chunkOptions('abc', 0)).toThrow(/chunk_size/);
  });
});
