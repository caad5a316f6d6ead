/**
 * Operand order: "convert Celsius to Fahrenheit" and "convert Fahrenheit to Celsius" have the
 * same words, so a mean-pooled sentence embedding scores them ~1.0 (measured: 18 % of our
 * templated look-alikes stay above 0.99 with minilm). A pair declines when two words both
 * questions share appear in opposite orders and, in either question, a relation word (to,
 * than, from, vs …) stands between them within a few words. Moving a phrase without a
 * relation word between ("how do I delete a branch in git" / "in git, how do I delete a
 * branch") does not count: that reordering keeps the meaning.
 */

const RELATIONS = new Set([
  'to',
  'into',
  'than',
  'from',
  'vs',
  'versus',
  'over',
  'before',
  'after',
  'under',
  'above',
  'below',
  'against',
  'by',
  'per',
]);
// How many words may separate the two operands from each other.
const SPAN = 4;

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** True when a relation word stands between positions i < j and j - i <= SPAN. */
const related = (ws: readonly string[], i: number, j: number): boolean => {
  if (j - i > SPAN) return false;
  for (let k = i + 1; k < j; k++) if (RELATIONS.has(ws[k] as string)) return true;
  return false;
};

/** First position of each word that occurs once (repeated words give no order). */
function positions(ws: readonly string[]): Map<string, number> {
  const seen = new Map<string, number>();
  const repeated = new Set<string>();
  ws.forEach((w, i) => (seen.has(w) ? repeated.add(w) : seen.set(w, i)));
  for (const w of repeated) seen.delete(w);
  return seen;
}

export function operandsSwapped(a: string, b: string): boolean {
  const wa = words(a);
  const wb = words(b);
  const pa = positions(wa);
  const pb = positions(wb);
  const shared = [...pa.keys()].filter((w) => pb.has(w) && !RELATIONS.has(w));
  for (let x = 0; x < shared.length; x++)
    for (let y = x + 1; y < shared.length; y++) {
      const u = shared[x] as string;
      const v = shared[y] as string;
      const [ia, ja] = [pa.get(u) as number, pa.get(v) as number];
      const [ib, jb] = [pb.get(u) as number, pb.get(v) as number];
      if (ia < ja === ib < jb) continue;
      if (related(wa, Math.min(ia, ja), Math.max(ia, ja)) || related(wb, Math.min(ib, jb), Math.max(ib, jb)))
        return true;
    }
  return false;
}
