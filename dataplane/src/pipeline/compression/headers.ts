/**
 * The `x-gantrystate-*` response headers of an eligible request. Free text (intent,
 * constraints) is percent-encoded outside printable ASCII and `%`, so any value is a legal
 * header and `decodeURIComponent` gives it back exactly.
 */
import { ResponseHeaders } from '../../brand.ts';
import type { ActiveConstraints } from './state.ts';
import type { Fallback } from './types.ts';

const P = ResponseHeaders.statePrefix;
/** Header values past this are cut (at a whole escape); proxies drop very long headers. */
export const MAX_TEXT_HEADER_CHARS = 4096;

export function encodeHeaderText(value: string, max = MAX_TEXT_HEADER_CHARS): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    const piece = code >= 0x20 && code <= 0x7e && ch !== '%' ? ch : encodeURIComponent(ch);
    if (out.length + piece.length > max) break;
    out += piece;
  }
  return out;
}

export function fallbackText(f: Fallback): string {
  return f.reason === 'below_threshold' ? `below_threshold(${f.tokens}/${f.threshold})` : f.reason;
}

/** 1 − result/original, four decimals; 0 for an empty original. */
export function ratio(originalTokens: number, resultTokens: number): number {
  if (originalTokens <= 0) return 0;
  return Math.round((1 - resultTokens / originalTokens) * 10_000) / 10_000;
}

export interface StateOutcome {
  mode: 'state' | 'none';
  originalTokens: number;
  tokens: number;
  latencyMs: number;
  extractionPromptTokens: number;
  extractionCompletionTokens: number;
  intent: string | undefined;
  constraints: ActiveConstraints | undefined;
  fallback: Fallback | undefined;
}

// Names built once: this runs on every eligible request, compressed or not.
const H = {
  mode: `${P}mode`,
  originalTokens: `${P}original-tokens`,
  tokens: `${P}tokens`,
  ratio: `${P}ratio`,
  latencyMs: `${P}latency-ms`,
  extractionPromptTokens: `${P}extraction-prompt-tokens`,
  extractionCompletionTokens: `${P}extraction-completion-tokens`,
  intent: `${P}intent`,
  constraints: `${P}constraints`,
  fallback: `${P}fallback`,
} as const;

/** Sets the outcome's headers on `into` (the request's response headers). */
export function setStateHeaders(into: Record<string, string>, o: StateOutcome): void {
  into[H.mode] = o.mode;
  into[H.originalTokens] = String(o.originalTokens);
  into[H.tokens] = String(o.tokens);
  // A pass-through saved nothing: its ratio is always this.
  into[H.ratio] = o.tokens === o.originalTokens ? '0.0000' : ratio(o.originalTokens, o.tokens).toFixed(4);
  into[H.latencyMs] = o.latencyMs === 0 ? '0' : String(Math.max(0, Math.round(o.latencyMs)));
  into[H.extractionPromptTokens] = String(o.extractionPromptTokens);
  into[H.extractionCompletionTokens] = String(o.extractionCompletionTokens);
  if (o.intent !== undefined) into[H.intent] = encodeHeaderText(o.intent);
  if (o.constraints !== undefined) into[H.constraints] = constraintsText(o.constraints);
  if (o.fallback) into[H.fallback] = fallbackText(o.fallback);
}

export function stateHeaders(o: StateOutcome): Record<string, string> {
  const h: Record<string, string> = {};
  setStateHeaders(h, o);
  return h;
}

/**
 * The constraints as JSON that fits the header: when too long, the last entries of the
 * largest lists and maps go first, so what is sent always parses.
 */
export function constraintsText(c: ActiveConstraints, max = MAX_TEXT_HEADER_CHARS): string {
  const copy = structuredClone(c);
  const fits = () => encodeHeaderText(JSON.stringify(copy), Infinity).length <= max;
  while (!fits()) {
    const fields: (string[] | Record<string, string> | unknown[])[] = [
      copy.identifiers,
      copy.values,
      copy.requirements,
      copy.actions_taken,
      copy.files_modified,
      copy.errors_encountered,
      copy.progress.done,
      copy.progress.next,
    ];
    const size = (f: (typeof fields)[number]) => JSON.stringify(f).length;
    const largest = fields.reduce((a, b) => (size(b) > size(a) ? b : a));
    if (Array.isArray(largest) && largest.length > 0) largest.pop();
    else if (!Array.isArray(largest) && Object.keys(largest).length > 0)
      delete largest[Object.keys(largest).at(-1)!];
    else {
      copy.progress.current = '';
      if (!fits()) return '{}';
    }
  }
  return encodeHeaderText(JSON.stringify(copy), Infinity);
}
