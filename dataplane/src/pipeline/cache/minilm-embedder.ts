/**
 * The `minilm` embedder: all-MiniLM-L6-v2 (Apache-2.0) run in process on the CPU through
 * onnxruntime-node, from the artefacts scripts/build-minilm.py makes (models/minilm): an int8
 * encoder graph and an int8 word table kept outside it so no file reaches 20 MB.
 * Mean pooling, unit length, 384 dimensions. Its files are checked at start-up
 * (minilm-files.ts) and loaded once, on first use (a failed load is retried at most once per
 * MINILM_RETRY_MS); texts run one at a
 * time with one intra-op thread (a batch of two short texts gains nothing from padding, and
 * the gateway's event loop shares the machine).
 */
import { createRequire } from 'node:module';
import type * as Ort from 'onnxruntime-node';
import { assetPath, MINILM_DIR_FROM_ASSETS } from '../../assets.ts';
import { EmbeddingError, normalizeInPlace, type Embedder } from './embedder.ts';
import { minilmWords, type WordTable } from './minilm-words.ts';
import { encodeWordPiece, type WordPieceVocab } from './wordpiece.ts';

export { MINILM_EMBEDDING_MODEL } from './policy.ts';
export const MINILM_DIMENSIONS = 384;
/**
 * Longer texts are cut to their first 128 tokens: a question is far shorter, and attention's
 * cost grows with the square of the length (the model was trained on up to 128 as well).
 */
export const MINILM_MAX_TOKENS = 128;
/**
 * Only the start of a text is tokenized: 128 tokens of any real text fit in far fewer
 * characters, and a multi-megabyte message must not hold the event loop.
 */
const MAX_CHARS = 4000;

interface Loaded {
  ort: typeof Ort;
  session: Ort.InferenceSession;
  vocab: WordPieceVocab;
  words: WordTable;
}

/**
 * models/minilm, two levels above dataplane/src and dataplane/dist alike (assets.ts); the
 * image copies it to /app/models. GANTRY_MINILM_DIR points a relocated bundle elsewhere.
 */
export function minilmDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.GANTRY_MINILM_DIR || assetPath(MINILM_DIR_FROM_ASSETS);
}

/**
 * onnxruntime (a native library, ~13 MB of RSS) is required with the model, on first use: the
 * bundle imports every module at start-up, and a gateway whose cache is off never embeds.
 */
const requireCjs = createRequire(import.meta.url);

async function load(dir: string): Promise<Loaded> {
  const ort = requireCjs('onnxruntime-node') as typeof Ort;
  // Shared with difficulty routing, which averages the same rows.
  const { words, vocab } = minilmWords(dir);
  if (words.dims !== MINILM_DIMENSIONS) throw new Error(`word table has ${words.dims} dimensions`);
  const session = await ort.InferenceSession.create(`${dir}/encoder.int8.onnx`, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  return { ort, session, vocab, words };
}

/** Dequantised word rows of `ids`, one after the other: the encoder's input. */
function lookUp(words: WordTable, ids: readonly number[]): Float32Array {
  const d = words.dims;
  const out = new Float32Array(ids.length * d);
  ids.forEach((id, t) => {
    const s = words.scales[id] as number;
    const from = id * d;
    for (let j = 0; j < d; j++) out[t * d + j] = (words.rows[from + j] as number) * s;
  });
  return out;
}

export interface MinilmEmbedder extends Embedder {
  /** Loads the model now (at start-up) rather than on the first request. */
  ready(): Promise<void>;
}

/**
 * After a failed load, the embedder answers from the kept failure (the cache fails open as a
 * miss) and tries the disk again at most this often: a folder mounted or fixed after start-up
 * comes back without a restart, and no request reads 12 MB from disk.
 */
export const MINILM_RETRY_MS = 30_000;

export interface MinilmEmbedderOptions {
  /** Milliseconds between load attempts after a failure. */
  retryMs?: number;
  /** Injectable for tests; milliseconds on a monotonic clock (performance.now by default). */
  now?: () => number;
}

export function createMinilmEmbedder(
  dir: string = minilmDir(),
  opts: MinilmEmbedderOptions = {},
): MinilmEmbedder {
  const retryMs = opts.retryMs ?? MINILM_RETRY_MS;
  // Monotonic: a wall clock stepped back (NTP) would keep a failure for as long as the step, and
  // one stepped forward would retry early.
  const now = opts.now ?? ((): number => performance.now());
  /** The load in flight, or the one that succeeded. */
  let loading: Promise<Loaded> | undefined;
  let failed: { at: number; error: EmbeddingError } | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const get = (): Promise<Loaded> => {
    if (loading) return loading;
    if (failed && now() - failed.at < retryMs) return Promise.reject(failed.error);
    const attempt = load(dir).catch((err: unknown) => {
      const error = new EmbeddingError(
        `minilm model in ${dir} could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
        err,
      );
      failed = { at: now(), error };
      loading = undefined;
      throw error;
    });
    loading = attempt;
    return attempt;
  };
  const embedOne = async (m: Loaded, text: string): Promise<Float32Array> => {
    const ids = encodeWordPiece(text.slice(0, MAX_CHARS), m.vocab, MINILM_MAX_TOKENS);
    const input = new m.ort.Tensor('float32', lookUp(m.words, ids), [ids.length, MINILM_DIMENSIONS]);
    const out = await m.session.run({ words: input });
    const pooled = out.pooled?.data;
    if (!(pooled instanceof Float32Array) || pooled.length !== MINILM_DIMENSIONS)
      throw new EmbeddingError('minilm returned no pooled vector');
    const v = Float32Array.from(pooled);
    if (!normalizeInPlace(v)) throw new EmbeddingError('minilm vector is zero or not finite');
    return v;
  };
  return {
    id: 'minilm:all-MiniLM-L6-v2:int8:v1',
    dimensions: MINILM_DIMENSIONS,
    async ready() {
      await get();
    },
    embed(texts) {
      // One text at a time through the session: concurrent runs would each hold a libuv pool
      // thread (shared with DNS and file I/O) for no gain on a CPU-bound model.
      const run = queue.then(async () => {
        const m = await get();
        const out: Float32Array[] = [];
        for (const t of texts) out.push(await embedOne(m, t));
        return out;
      });
      queue = run.catch(() => undefined);
      return run;
    },
  };
}
