import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createMinilmEmbedder, MINILM_DIMENSIONS, minilmDir } from './minilm-embedder.ts';
import { checkMinilmFiles } from './minilm-files.ts';
import { dot } from './score.ts';
import { encodeWordPiece, parseVocab } from './wordpiece.ts';
import { MINILM_THRESHOLDS, resolveCachePolicy } from './policy.ts';

const temps: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-minilm-'));
  temps.push(dir);
  return dir;
};
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const source = JSON.parse(readFileSync(`${minilmDir()}/SOURCE.json`, 'utf8')) as {
  checks: { text: string; ids: number[]; fp32_unit: number[] }[];
};

/** The error `p` rejects with; a fulfilled `p` fails the test. */
const failure = (p: Promise<unknown>): Promise<Error> =>
  p.then(
    () => {
      throw new Error('expected the embedder to fail');
    },
    (err: unknown) => err as Error,
  );

describe('minilm embedder', () => {
  const embedder = createMinilmEmbedder();

  it('tokenizes as the build script did (BERT uncased WordPiece)', () => {
    const vocab = parseVocab(readFileSync(`${minilmDir()}/vocab.txt`, 'utf8'));
    for (const c of source.checks) expect(encodeWordPiece(c.text, vocab, 128)).toEqual(c.ids);
    expect(encodeWordPiece('Café naïve', vocab, 128)).toEqual(encodeWordPiece('cafe naive', vocab, 128));
    expect(encodeWordPiece('word '.repeat(500), vocab, 128)).toHaveLength(128);
  });

  it('matches the fp32 reference of the build script and returns unit vectors', async () => {
    const vs = await embedder.embed(source.checks.map((c) => c.text));
    source.checks.forEach((c, i) => {
      const v = vs[i] as Float32Array;
      expect(v).toHaveLength(MINILM_DIMENSIONS);
      expect(dot(v, v)).toBeCloseTo(1, 4);
      // Only the first 8 reference values are stored; int8 keeps them within a few hundredths.
      c.fp32_unit.forEach((x, j) => expect(Math.abs((v[j] as number) - x)).toBeLessThan(0.02));
    });
  });

  it('scores a reworded question above an unrelated one', async () => {
    const [a, b, c] = await embedder.embed([
      'How do I bake bread at home?',
      'What is a simple recipe for homemade bread?',
      'Is it safe to take ibuprofen with coffee?',
    ]);
    expect(dot(a as Float32Array, b as Float32Array)).toBeGreaterThan(0.6);
    expect(dot(a as Float32Array, c as Float32Array)).toBeLessThan(0.2);
  });

  it('is picked by embeddingModel: minilm, with its own default thresholds', () => {
    expect(resolveCachePolicy({ embeddingModel: 'minilm' }).thresholds).toEqual(MINILM_THRESHOLDS);
  });

  it('fails with an EmbeddingError (the cache fails open) when the model files are missing', async () => {
    await expect(createMinilmEmbedder('/nonexistent').embed(['x'])).rejects.toThrow(/could not be loaded/);
  });

  it('after a failed load, tries the disk again at most once per retry interval, never per request', async () => {
    const dir = tempDir();
    let clock = 1_000_000;
    const late = createMinilmEmbedder(dir, { retryMs: 30_000, now: () => clock });
    const first = await failure(late.embed(['x']));
    expect(first.message).toMatch(/could not be loaded/);
    cpSync(minilmDir(), dir, { recursive: true });
    // Within the interval the kept failure answers: the same error object, no new load.
    clock += 29_999;
    expect(await failure(late.embed(['x']))).toBe(first);
    expect(await failure(late.embed(['y']))).toBe(first);
    // Once the interval has passed, the files that appeared meanwhile load.
    clock += 1;
    expect(await late.embed(['x'])).toHaveLength(1);
  });

  it('times its retry interval on a monotonic clock, not the wall clock', async () => {
    const wall = vi.spyOn(Date, 'now');
    try {
      // The wall clock is stepped back an hour (NTP) right after the failure.
      wall.mockReturnValue(Date.UTC(2026, 0, 1, 12));
      const broken = createMinilmEmbedder(tempDir(), { retryMs: 5 });
      const first = await failure(broken.embed(['x']));
      wall.mockReturnValue(Date.UTC(2026, 0, 1, 11));
      const since = performance.now();
      while (performance.now() - since < 10) await new Promise((r) => setImmediate(r));
      const second = await failure(broken.embed(['x']));
      // A new load was tried: a wall-clock interval would still be "negative" and keep the first.
      expect(second).not.toBe(first);
    } finally {
      wall.mockRestore();
    }
  });

  it('a retry that fails again starts a new interval', async () => {
    const dir = tempDir();
    let clock = 0;
    const broken = createMinilmEmbedder(dir, { retryMs: 30_000, now: () => clock });
    const first = await failure(broken.embed(['x']));
    clock = 30_000;
    const second = await failure(broken.embed(['x']));
    expect(second).not.toBe(first);
    expect(second.message).toMatch(/could not be loaded/);
    clock = 59_999;
    expect(await failure(broken.embed(['x']))).toBe(second);
  });
});

describe('minilm files at start-up', () => {
  it('accepts the committed files', () => {
    expect(() => checkMinilmFiles(minilmDir())).not.toThrow();
  });

  it('names a missing file and a vocabulary that does not match the word table', () => {
    const dir = tempDir();
    cpSync(minilmDir(), dir, { recursive: true });
    rmSync(join(dir, 'encoder.int8.onnx'));
    expect(() => checkMinilmFiles(dir)).toThrow(`${join(dir, 'encoder.int8.onnx')}: missing. `);
    cpSync(join(minilmDir(), 'encoder.int8.onnx'), join(dir, 'encoder.int8.onnx'));
    const vocab = readFileSync(join(dir, 'vocab.txt'), 'utf8');
    // Same size, one token fewer: two lines joined.
    writeFileSync(join(dir, 'vocab.txt'), vocab.replace('\n', ' '));
    expect(() => checkMinilmFiles(dir)).toThrow(/vocab\.txt: corrupt \(30521 lines for 30522 word rows\)/);
  });

  it('reads a CRLF vocabulary as the LF one, and names CRLF line ends at start-up', () => {
    const lf = readFileSync(join(minilmDir(), 'vocab.txt'), 'utf8');
    const crlf = lf.replaceAll('\n', '\r\n');
    expect(parseVocab(crlf)).toEqual(parseVocab(lf));
    const dir = tempDir();
    cpSync(minilmDir(), dir, { recursive: true });
    writeFileSync(join(dir, 'vocab.txt'), crlf);
    expect(() => checkMinilmFiles(dir)).toThrow(/vocab\.txt: corrupt \(\d+ bytes, .*lines end in CRLF/);
  });

  it('names a SOURCE.json that is not JSON', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'SOURCE.json'), '{');
    expect(() => checkMinilmFiles(dir)).toThrow(/SOURCE\.json: corrupt \(/);
  });
});
