/**
 * Embeddings behind one interface. The cache embeds the query and the context of a request
 * in a single `embed` call; every vector it gets back is unit length, so a cosine is a dot
 * product.
 */

export interface Embedder {
  /**
   * Identifies the vector space: vectors of two embedders are never compared, so the id is
   * part of every partition key. Change it whenever the embedding function changes.
   */
  readonly id: string;
  /** Vector length; undefined for a model embedder that has not answered yet. */
  readonly dimensions: number | undefined;
  /** One unit-length vector per text, in order. Rejects with EmbeddingError. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** The embedder could not produce vectors (model call failed, bad reply). The cache fails open on it. */
export class EmbeddingError extends Error {
  override readonly name = 'EmbeddingError';
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

export const isEmbeddingError = (err: unknown): err is EmbeddingError => err instanceof EmbeddingError;

/**
 * Embedding APIs refuse empty input, and an empty context must still equal another empty
 * context. Both sides of every comparison pass through here, so any fixed text works.
 */
export const EMPTY_TEXT = '\u2205';

export interface CacheVectors {
  query: Float32Array;
  context: Float32Array;
}

/** Query and context in one embedder call (one model round trip). */
export async function embedForCache(
  embedder: Embedder,
  parts: { query: string; context: string },
): Promise<CacheVectors> {
  const [query, context] = await embedder.embed([parts.query || EMPTY_TEXT, parts.context || EMPTY_TEXT]);
  if (!query || !context) throw new EmbeddingError(`embedder ${embedder.id} returned too few vectors`);
  if (query.length !== context.length)
    throw new EmbeddingError(`embedder ${embedder.id} returned vectors of different lengths`);
  return { query, context };
}

/** Scales `v` to unit length in place; false when it has no direction (all zero). */
export function normalizeInPlace(v: Float32Array): boolean {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (!(sum > 0) || !Number.isFinite(sum)) return false;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
  return true;
}
