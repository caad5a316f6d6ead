/**
 * Embeddings from a model: the caller injects the call (the data plane routes it through its
 * own router to an embeddings ModelDeployment, so failover and circuit breaking apply; the
 * platform pays for these calls and they are not charged to any key).
 * Replies are checked (one finite, non-zero vector per text, all the same length) and
 * normalised to unit length.
 */
import { EmbeddingError, normalizeInPlace, type Embedder } from './embedder.ts';

export type EmbedCall = (texts: string[]) => Promise<number[][]>;

export interface ModelEmbedderOptions {
  /** The embeddings model (ModelDeployment `model`); part of the embedder id. */
  model: string;
  call: EmbedCall;
  /** Expected vector length; learned from the first reply when absent. */
  dimensions?: number;
}

export function createModelEmbedder(opts: ModelEmbedderOptions): Embedder {
  let dimensions = opts.dimensions;
  return {
    id: `model:${opts.model}`,
    get dimensions() {
      return dimensions;
    },
    async embed(texts) {
      if (texts.length === 0) return [];
      let reply: number[][];
      try {
        reply = await opts.call([...texts]);
      } catch (err) {
        throw new EmbeddingError(
          `embedding model ${opts.model} failed: ${err instanceof Error ? err.message : String(err)}`,
          err,
        );
      }
      if (!Array.isArray(reply) || reply.length !== texts.length)
        throw new EmbeddingError(
          `embedding model ${opts.model} returned ${Array.isArray(reply) ? reply.length : 'no'} vectors for ${texts.length} texts`,
        );
      const expected = dimensions ?? reply[0]?.length;
      return reply.map((values, i) => {
        if (!Array.isArray(values) || values.length !== expected || expected === 0)
          throw new EmbeddingError(
            `embedding model ${opts.model}: vector ${i} has ${Array.isArray(values) ? values.length : 'no'} dimensions, expected ${expected}`,
          );
        const v = Float32Array.from(values);
        if (!normalizeInPlace(v))
          throw new EmbeddingError(`embedding model ${opts.model}: vector ${i} is zero or not finite`);
        dimensions = expected;
        return v;
      });
    },
  };
}
