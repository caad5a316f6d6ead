import { describe, expect, it } from 'vitest';
import { BUILTIN_DIMENSIONS, builtinEmbed, createBuiltinEmbedder } from './builtin-embedder.ts';
import { dot } from './score.ts';

const norm = (v: Float32Array) => Math.sqrt(dot(v, v));

describe('builtin embedder', () => {
  it('is deterministic and unit length, with a stable id', async () => {
    const e = createBuiltinEmbedder();
    expect(e.id).toBe('builtin-v1-384');
    expect(e.dimensions).toBe(BUILTIN_DIMENSIONS);
    const [a, b] = await e.embed(['How do I reset my password?', 'How do I reset my password?']);
    expect(a).toHaveLength(384);
    expect([...a!]).toEqual([...b!]);
    expect(norm(a!)).toBeCloseTo(1, 6);
  });

  it('maps text without words to one fixed vector', () => {
    const empty = builtinEmbed('');
    expect([...builtinEmbed('?!  …')]).toEqual([...empty]);
    expect(norm(empty)).toBeCloseTo(1, 6);
    expect(dot(empty, builtinEmbed('password reset'))).toBeLessThan(0.5);
  });

  it('scores paraphrases high and unrelated texts low', () => {
    const sim = (a: string, b: string) => dot(builtinEmbed(a), builtinEmbed(b));
    expect(sim('What is the capital of France?', 'what is the capital of france')).toBeGreaterThan(0.99);
    expect(
      sim('Explain the difference between TCP and UDP', 'What is the difference between TCP and UDP?'),
    ).toBeGreaterThan(0.9);
    expect(sim('What is the capital of France?', 'How do I bake sourdough bread?')).toBeLessThan(0.3);
    // Stop words carry little: sharing only "what is the ... of" is not similarity.
    expect(sim('What is the capital of France?', 'What is the boiling point of water?')).toBeLessThan(0.3);
  });

  it('normalises Unicode compatibility forms', () => {
    expect(dot(builtinEmbed('ｃａｆé menu'), builtinEmbed('café menu'))).toBeCloseTo(1, 5);
  });

  it('honours other dimensions and rejects tiny ones', () => {
    expect(builtinEmbed('hello world', 64)).toHaveLength(64);
    expect(() => createBuiltinEmbedder(8)).toThrow(RangeError);
  });

  it('embeds a short query in well under 50 µs', () => {
    const q = 'How do I reverse a list in Python without modifying the original?';
    for (let i = 0; i < 2000; i++) builtinEmbed(q + i); // warm up the JIT
    const n = 5000;
    const start = performance.now();
    for (let i = 0; i < n; i++) builtinEmbed(q);
    const perCallUs = ((performance.now() - start) * 1000) / n;
    expect(perCallUs).toBeLessThan(50);
  });
});
