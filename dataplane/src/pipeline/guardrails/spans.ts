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
  for (const f of ranked) {
    if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f);
  }
  return kept.sort((a, b) => a.start - b.start);
}

/** Walks back from `index` over characters that `isPart` accepts; returns the new start. */
export function extendLeft(text: string, index: number, isPart: (code: number) => boolean, max = 64): number {
  let i = index;
  while (i > 0 && index - i < max && isPart(text.charCodeAt(i - 1))) i--;
  return i;
}

export function isWordCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}
