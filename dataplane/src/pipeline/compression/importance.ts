/**
 * Importance of History messages, by SPEC.md's four signals: recency, error signals,
 * decision density and information density. When History is larger than the extraction
 * prompt may carry, the least important messages are shortened first, so what the state
 * must keep (errors, decisions, identifiers) reaches the extraction model whole.
 */
import { messageText } from './text.ts';
import type { Measured } from './types.ts';

const ERROR =
  /(?:error|exception)\b|\b(?:traceback|failed|failure|fatal|panic|denied|refused|timed? ?out|not found|cannot|segfault)\b|exit (?:code|status) [1-9]/gi;
/** errno names (ENOENT, EACCES): case matters, or every "export" would be an error. */
const ERRNO = /\bE[A-Z]{3,}\b/g;
/**
 * Signals are rates or capped counts, so a long message is read by its head and tail (where
 * a log puts its error and a reply its decision): scoring costs the same for 1 kB or 1 MB.
 */
const SAMPLE_CHARS = 600;
const sample = (text: string) =>
  text.length <= 2 * SAMPLE_CHARS ? text : `${text.slice(0, SAMPLE_CHARS)}\n${text.slice(-SAMPLE_CHARS)}`;
const DECISION =
  /\b(?:decided|decide|let's|we will|we'll|i'll|i will|should|must|instead|chose|choose|plan|approach|going to|agreed|requirement|need to|don't|do not)\b/gi;
/** Path segments are counted from their slash: cheap at any length. */
const INFO = /[/\\][\w.-]+|\b[a-z]+[A-Z]\w*\b|\b\w+_\w+\b|\b\d[\d.,:%-]*\b|`[^`\n]+`/g;

export const WEIGHTS = { recency: 0.3, errors: 0.3, decisions: 0.2, information: 0.2 } as const;

export interface Importance {
  recency: number;
  errors: number;
  decisions: number;
  information: number;
  score: number;
}

const density = (count: number, tokens: number, perTokens: number) =>
  Math.min(1, (count * perTokens) / Math.max(tokens, 1));

const count = (re: RegExp, text: string) => text.match(re)?.length ?? 0;

/** Each signal in 0..1; the score is their weighted sum. `position` 0 = oldest of `total`. */
export function scoreMessage(full: string, fullTokens: number, position: number, total: number): Importance {
  const text = sample(full);
  // Densities are per token of what was read.
  const tokens = text === full ? fullTokens : Math.ceil((fullTokens * text.length) / full.length);
  const recency = total <= 1 ? 1 : position / (total - 1);
  const errors = Math.min(1, (count(ERROR, text) + count(ERRNO, text)) / 2);
  const decisions = density(count(DECISION, text), tokens, 40);
  const information = density(count(INFO, text), tokens, 10);
  const score =
    WEIGHTS.recency * recency +
    WEIGHTS.errors * errors +
    WEIGHTS.decisions * decisions +
    WEIGHTS.information * information;
  return { recency, errors, decisions, information, score };
}

export function scoreHistory(history: readonly Measured[]): Importance[] {
  return history.map((h, i) => scoreMessage(messageText(h.message), h.tokens, i, history.length));
}

/**
 * Token allowance per History message so the whole fits `budget`: most important first get
 * theirs whole; the rest share what is left (at least a head and tail of `floor` tokens).
 */
export function allocate(
  history: readonly Measured[],
  scores: readonly Importance[],
  budget: number,
  floor = 48,
): number[] {
  const total = history.reduce((n, h) => n + h.tokens, 0);
  if (total <= budget) return history.map((h) => h.tokens);
  const order = history.map((_, i) => i).sort((a, b) => scores[b]!.score - scores[a]!.score || b - a);
  const out = history.map((h) => Math.min(h.tokens, floor));
  let left = budget - out.reduce((n, x) => n + x, 0);
  for (const i of order) {
    if (left <= 0) break;
    const extra = Math.min(history[i]!.tokens - out[i]!, left);
    out[i]! += extra;
    left -= extra;
  }
  return out;
}

/** A text cut to about `tokens` tokens, head and tail kept (errors sit at the end of logs). */
export function shorten(text: string, tokens: number): string {
  const chars = tokens * 4;
  if (text.length <= chars) return text;
  const head = Math.ceil(chars * 0.6);
  const tail = chars - head;
  return `${text.slice(0, head)}\n[… ${text.length - chars} characters omitted …]\n${text.slice(text.length - tail)}`;
}
