import { describe, expect, it, vi } from 'vitest';
import { EMPTY_TEXT, EmbeddingError, embedForCache } from './embedder.ts';
import { createModelEmbedder } from './model-embedder.ts';
import { dot } from './score.ts';

describe('model embedder', () => {
  it('embeds query and context in one call, normalised', async () => {
    const call = vi.fn(async (texts: string[]) => texts.map((t) => [t.length, 0, 0, 1]));
    const e = createModelEmbedder({ model: 'text-embedding-3-small', call });
    expect(e.id).toBe('model:text-embedding-3-small');
    expect(e.dimensions).toBeUndefined();
    const v = await embedForCache(e, { query: 'abc', context: '' });
    expect(call).toHaveBeenCalledTimes(1);
    // Empty text never reaches the model (embedding APIs refuse it).
    expect(call).toHaveBeenCalledWith(['abc', EMPTY_TEXT]);
    expect(dot(v.query, v.query)).toBeCloseTo(1, 6);
    expect(v.query[0]).toBeCloseTo(3 / Math.sqrt(10), 6);
    expect(e.dimensions).toBe(4);
  });

  it('rejects bad replies with EmbeddingError', async () => {
    const reply = (r: number[][]) => createModelEmbedder({ model: 'm', call: async () => r });
    await expect(reply([[1, 0]]).embed(['a', 'b'])).rejects.toBeInstanceOf(EmbeddingError);
    await expect(reply([[1, 0], [1]]).embed(['a', 'b'])).rejects.toBeInstanceOf(EmbeddingError);
    await expect(reply([[0, 0]]).embed(['a'])).rejects.toBeInstanceOf(EmbeddingError);
    await expect(reply([[Number.NaN, 1]]).embed(['a'])).rejects.toBeInstanceOf(EmbeddingError);
    await expect(
      createModelEmbedder({ model: 'm', dimensions: 3, call: async () => [[1, 0]] }).embed(['a']),
    ).rejects.toThrow(/expected 3/);
  });

  it('wraps a failing call in EmbeddingError, keeping the cause', async () => {
    const cause = new Error('upstream 503');
    const e = createModelEmbedder({
      model: 'm',
      call: async () => {
        throw cause;
      },
    });
    const err = await e.embed(['a']).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(EmbeddingError);
    expect((err as Error).cause).toBe(cause);
  });

  it('keeps the length it learned', async () => {
    let dims = 3;
    const e = createModelEmbedder({
      model: 'm',
      call: async (t) => t.map(() => Array.from({ length: dims }, () => 1)),
    });
    await e.embed(['a']);
    dims = 4;
    await expect(e.embed(['a'])).rejects.toBeInstanceOf(EmbeddingError);
  });
});
