import type { Finding } from './types.ts';

/**
 * Resolves overlapping findings of one detector: the higher score wins, a tie goes to the
 * longer span. Redaction needs disjoint spans, and a specific rule (a GitHub token) should
 * not be reported twice because a generic one saw the same characters.
 */
export function dedupeOverlaps(findings: Finding[]): Finding[] {
  if (findings.length < 2) return findings;
  const ranked = [...findings].sort((a, b) => b.score - a.score || b.end - b.start - (a.end - a.start));
  const kept: Finding[] = [];
  if (ranked.some((f) => f.end <= f.start)) {
    for (const f of ranked) if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f);
    return kept.sort((a, b) => a.start - b.start);
  }
  // Kept spans never overlap, so in start order their ends rise too: a new span can only
  // overlap the last kept span starting before its end. One binary search per span, not a
  // walk over every kept one, which made many findings in one long text quadratic.
  for (const f of ranked) {
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid]!.start < f.end) lo = mid + 1;
      else hi = mid;
    }
    const before = kept[lo - 1];
    if (before && before.end > f.start) continue;
    kept.splice(lo, 0, f);
  }
  return kept.sort((a, b) => a.start - b.start);
}

/** Walks back from `index` over characters that `isPart` accepts; returns the new start. */
export function extendLeft(text: string, index: number, isPart: (code: number) => boolean, max = 64): number {
  let i = index;
  while (i > 0 && index - i < max && isPart(text.charCodeAt(i - 1))) i--;
  return i;
}

/**
 * True when every UTF-16 unit of `text` is below 0x80. A native length count that reads
 * 80,000 characters in ~5 µs, where a regex test for any non-ASCII character needs ~35 µs:
 * it gates the passes that can only match outside ASCII (disguise characters, non-Latin
 * anchors), which most texts, ASCII throughout, then skip.
 */
export function allAscii(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') === text.length;
}

export function isWordCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

const QUOTES = '"\'“”„«»‘’`';
const QUOTE_CODES = new Set([...QUOTES].map((q) => q.charCodeAt(0)));
const APOSTROPHE = 0x27;
const RIGHT_SINGLE_QUOTE = 0x2019;

/** Whether text[i] is a quote mark; an apostrophe between letters ("don't") is not one. */
function isQuote(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (!QUOTE_CODES.has(c)) return false;
  return (
    (c !== APOSTROPHE && c !== RIGHT_SINGLE_QUOTE) ||
    !isWordCode(text.charCodeAt(i - 1)) ||
    !isWordCode(text.charCodeAt(i + 1))
  );
}

/**
 * Whether [start, end) sits between quote marks on its own line: a mention, not a use.
 * Character codes, not one-character strings and a closure per call: scoring calls this
 * for every hit, dozens per line in a text dense with them.
 */
export function insideQuotes(text: string, start: number, end: number): boolean {
  let open = false;
  for (let i = start - 1; i >= Math.max(0, start - 80) && text.charCodeAt(i) !== 10; i--) {
    if (isQuote(text, i)) {
      open = true;
      break;
    }
  }
  if (!open) return false;
  for (let i = end; i < Math.min(text.length, end + 120) && text.charCodeAt(i) !== 10; i++)
    if (isQuote(text, i)) return true;
  return false;
}
