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

export function stateHeaders(o: StateOutcome): Record<string, string> {
  const h: Record<string, string> = {
    [`${P}mode`]: o.mode,
    [`${P}original-tokens`]: String(o.originalTokens),
    [`${P}tokens`]: String(o.tokens),
    [`${P}ratio`]: ratio(o.originalTokens, o.tokens).toFixed(4),
    [`${P}latency-ms`]: String(Math.max(0, Math.round(o.latencyMs))),
    [`${P}extraction-prompt-tokens`]: String(o.extractionPromptTokens),
    [`${P}extraction-completion-tokens`]: String(o.extractionCompletionTokens),
  };
  if (o.intent !== undefined) h[`${P}intent`] = encodeHeaderText(o.intent);
  if (o.constraints !== undefined) h[`${P}constraints`] = constraintsText(o.constraints);
  if (o.fallback) h[`${P}fallback`] = fallbackText(o.fallback);
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
