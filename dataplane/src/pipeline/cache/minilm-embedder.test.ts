import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMinilmEmbedder, MINILM_DIMENSIONS, minilmDir } from './minilm-embedder.ts';
import { dot } from './score.ts';
import { encodeWordPiece, parseVocab } from './wordpiece.ts';
import { MINILM_THRESHOLDS, resolveCachePolicy } from './policy.ts';

const source = JSON.parse(readFileSync(`${minilmDir()}/SOURCE.json`, 'utf8')) as {
  checks: { text: string; ids: number[]; fp32_unit: number[] }[];
};

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
});
