/**
 * The learned layer of the prompt-injection and toxicity guards: two logistic regressions
 * over hashed n-grams (features.ts), trained by scripts/train-guards.py. model.bin holds the
 * int8 weights of both, interleaved; model.json the header (feature spec, per-model scale,
 * bias and the cut chosen on the dev split, a checksum and parity texts).
 *
 * Plain typed arrays rather than onnxruntime-node: the model is a dot product, so a native
 * runtime would add a ~50 MB platform-specific dependency, a session per process and a
 * copy of every text into a tensor, for arithmetic that takes microseconds here.
 *
 * A text's score is the best of its windows: an attack appended to a long, ordinary
 * message or a slur in a long thread is not averaged away by the rest of it.
 */
import { createHash } from 'node:crypto';
import { corruptAsset, readBundledAsset, type BundledAsset } from '../../../assets.ts';
import { FeatureScorer, type FeatureSpec, type TokenSums, type WordNotes } from './features.ts';

export type LearnedModelName = 'injection' | 'toxicity';

interface ModelParams {
  scale: number;
  bias: number;
  /** Logit at which the model's verdict is "yes" on the dev split's operating point. */
  cut: number;
}

export interface ModelHeader extends FeatureSpec {
  format: 'gantry-guards-v1';
  models: Record<LearnedModelName, ModelParams>;
  sha256: string;
  seed: number;
  parity: Array<{ text: string; injection: number; toxicity: number }>;
}

export interface WindowScore {
  /** Raw logit of the best window. */
  logit: number;
  /** 0..1, 0.5 exactly at the model's cut (see toScore). */
  score: number;
  /** UTF-16 span of the best window. */
  start: number;
  end: number;
  /** Tokens in the whole text: how many windows competed for "best". */
  tokens: number;
}

export type LearnedScores = Record<LearnedModelName, WindowScore>;

/**
 * Maps a logit to a score with 0.5 at the cut, so the policy's default threshold (0.5) is
 * the operating point chosen on dev; a tenant raising the threshold asks for more margin.
 */
export function toScore(logit: number, cut: number): number {
  return 1 / (1 + Math.exp(-2 * (logit - cut)));
}

/**
 * A few words carry too little evidence for the injection model on its own ("Say hello"
 * scored as an attack): below this many features, the best window's evidence (its logit
 * above the bias) counts in proportion to its features. The logit itself stays the
 * trainer's, so parity with the training script holds.
 */
const SHORT_FEATURES = 40;

export class LearnedGuards {
  private readonly scorer: FeatureScorer;

  constructor(
    readonly header: ModelHeader,
    weights: Int8Array,
  ) {
    this.scorer = new FeatureScorer(header, weights);
  }

  score(text: string): LearnedScores {
    return this.scoreTokens(this.scorer.tokenSums(text));
  }

  /**
   * score() of an all-ASCII text given as its bytes (FeatureScorer.asciiTokenSums), with
   * `notes` on its words when given. Its tokens stay in `tokens` until the next call.
   */
  scoreAscii(bytes: Uint8Array, length: number, notes?: WordNotes): LearnedScores {
    return this.scoreTokens(this.scorer.asciiTokenSums(bytes, length, notes));
  }

  /** Tokens of the last text scored: valid until the next call of score, scoreAscii or release. */
  get tokens(): TokenSums {
    return this.scorer.lastTokens;
  }

  /** Lets a long text's token buffers go once its caller is done with `tokens`. */
  release(): void {
    this.scorer.release();
  }

  /** Bytes of token buffers held between texts (for tests). */
  get retainedBytes(): number {
    return this.scorer.retainedBytes;
  }

  private scoreTokens(t: TokenSums): LearnedScores {
    const { injection, toxicity } = this.header.models;
    const count = t.count;
    // Prefix sums (from the token pass) make every window O(1).
    const p = t.prefix;
    // Windows as forEachWindow (features.ts) lists them, in plain loops: this runs for
    // every text of every request, and closures created per call cost more than the maths.
    const { window, stride, smallWindow, smallStride } = this.header;
    const s0 = injection.scale;
    const s1 = toxicity.scale;
    let z0best = -Infinity;
    let z1best = -Infinity;
    let a0 = 0;
    let b0 = 0;
    let n0 = 0;
    let a1 = 0;
    let b1 = 0;
    for (let pass = 0; pass < 2; pass++) {
      const size = pass === 0 ? window : smallWindow;
      const step = pass === 0 ? stride : smallStride;
      if (pass === 1 && count <= smallWindow) break;
      const last = count <= size ? 0 : count - size;
      for (let a = 0; ; a += step) {
        if (a > last) a = last;
        const b = a + size < count ? a + size : count;
        const n = (p[3 * b + 2] as number) - (p[3 * a + 2] as number);
        const norm = n > 0 ? 1 / Math.sqrt(n) : 0;
        const z0 = injection.bias + ((p[3 * b] as number) - (p[3 * a] as number)) * s0 * norm;
        const z1 = toxicity.bias + ((p[3 * b + 1] as number) - (p[3 * a + 1] as number)) * s1 * norm;
        if (z0 > z0best) {
          z0best = z0;
          a0 = a;
          b0 = b;
          n0 = n;
        }
        if (z1 > z1best) {
          z1best = z1;
          a1 = a;
          b1 = b;
        }
        if (a === last) break;
      }
    }
    const starts = t.starts;
    const ends = t.ends;
    return {
      injection: {
        logit: z0best,
        score: toScore(
          injection.bias + (z0best - injection.bias) * Math.min(1, n0 / SHORT_FEATURES),
          injection.cut,
        ),
        start: b0 > a0 ? (starts[a0] as number) : 0,
        end: b0 > a0 ? (ends[b0 - 1] as number) : 0,
        tokens: count,
      },
      toxicity: {
        logit: z1best,
        score: toScore(z1best, toxicity.cut),
        start: b1 > a1 ? (starts[a1] as number) : 0,
        end: b1 > a1 ? (ends[b1 - 1] as number) : 0,
        tokens: count,
      },
    };
  }
}

/** Checks the header's shape once, at load: everything the scorer reads from it. */
export function parseHeader(json: string): ModelHeader {
  const h = JSON.parse(json) as Partial<ModelHeader>;
  if (h.format !== 'gantry-guards-v1')
    throw new Error(`learned guard model: unknown format ${String(h.format)}`);
  for (const key of ['dimBits', 'window', 'stride', 'smallWindow', 'smallStride', 'maxGramChars'] as const)
    if (!Number.isInteger(h[key]) || (h[key] as number) <= 0)
      throw new Error(`learned guard model: ${key} must be a positive integer`);
  // 2 << dimBits int8 weights: past 2^28 the file would not be a model we trained.
  if ((h.dimBits as number) > 27) throw new Error('learned guard model: dimBits must be at most 27');
  for (const m of ['injection', 'toxicity'] as const) {
    const p = h.models?.[m];
    if (!p || ![p.scale, p.bias, p.cut].every(Number.isFinite))
      throw new Error(`learned guard model: ${m} needs finite scale, bias and cut`);
  }
  if (typeof h.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(h.sha256))
    throw new Error('learned guard model: sha256 must be 64 hex digits');
  return h as ModelHeader;
}

const HEADER: BundledAsset = 'pipeline/guardrails/learned/model.json';
const WEIGHTS: BundledAsset = 'pipeline/guardrails/learned/model.bin';

/**
 * Reads and checks the bundled model. A missing, unreadable or corrupt file is an AssetError
 * naming the file and the fix; the gateway loads this before it listens (learnedGuards), so
 * such a file stops start-up instead of failing requests. `base` is a URL inside the folder
 * that stands for dataplane/src (tests point it at a copy).
 */
export function loadLearnedGuards(base?: string): LearnedGuards {
  const header = readBundledAsset(HEADER, base);
  let parsed: ModelHeader;
  try {
    parsed = parseHeader(header.bytes.toString('utf8'));
  } catch (err) {
    throw corruptAsset(header.path, (err as Error).message);
  }
  const weights = readBundledAsset(WEIGHTS, base);
  const bytes = weights.bytes;
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== parsed.sha256) throw corruptAsset(weights.path, `checksum mismatch with ${header.path}`);
  if (bytes.byteLength !== 2 << parsed.dimBits)
    throw corruptAsset(
      weights.path,
      `${bytes.byteLength} bytes where the header asks for ${2 << parsed.dimBits}`,
    );
  return new LearnedGuards(parsed, new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

let shared: LearnedGuards | Error | undefined;

/**
 * The process-wide model. The gateway calls this at start-up, so a bad file stops the process
 * before it listens; a failure is kept, so no caller ever reads the disk twice.
 */
export function learnedGuards(): LearnedGuards {
  if (shared === undefined) {
    try {
      shared = loadLearnedGuards();
    } catch (err) {
      shared = err instanceof Error ? err : new Error(String(err));
    }
  }
  if (shared instanceof Error) throw shared;
  return shared;
}
