import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auc } from './auc.ts';
import { classifyDifficulty } from './classify.ts';
import { extractFeatures } from './features.ts';
import { hashedBuckets, HASH_BUCKETS } from './outcome-features.ts';
import { weakFailProbability } from './outcome.ts';

interface OutcomeRow {
  weakFails: boolean;
  text: string;
}
const load = (name: string): OutcomeRow[] =>
  readFileSync(new URL(`../../../../test/data/routing/outcomes/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutcomeRow);

/** The same buckets built the slow, obvious way: strings and a Set. */
function referenceBuckets(text: string): number[] {
  const fnv = (s: string): number => {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    return h >>> 0;
  };
  const words =
    text
      .slice(0, 1500)
      .toLowerCase()
      .match(/[a-z0-9]+/g) ?? [];
  const out = new Set<number>();
  words.forEach((w, i) => {
    out.add(fnv(w) & (HASH_BUCKETS - 1));
    if (i > 0) out.add(fnv(`${words[i - 1] as string} ${w}`) & (HASH_BUCKETS - 1));
  });
  return [...out].sort((a, b) => a - b);
}

describe('outcome model', () => {
  it('hashes unigrams and bigrams exactly like the string-built reference', () => {
    for (const t of [
      'Hello, World!',
      'What is 2+2? Ünïcode words stop here',
      '',
      'a'.repeat(2000),
      'x y  z\nx y',
    ])
      expect([...hashedBuckets(t)].sort((a, b) => a - b)).toEqual(referenceBuckets(t));
  });

  it('ranks held-out MMLU subjects by weak-model failure (AUC >= 0.65)', () => {
    const rows = load('mmlu-heldout.jsonl');
    const p = rows.map((r) =>
      weakFailProbability(
        extractFeatures({ model: 'm', messages: [{ role: 'user', content: r.text }] }),
        r.text,
      ),
    );
    expect(
      auc(
        p,
        rows.map((r) => r.weakFails),
      ),
    ).toBeGreaterThanOrEqual(0.65);
  });

  it('does better than chance on MT-bench, a domain it never saw', () => {
    const rows = load('mt-bench.jsonl');
    const p = rows.map((r) =>
      weakFailProbability(
        extractFeatures({ model: 'm', messages: [{ role: 'user', content: r.text }] }),
        r.text,
      ),
    );
    expect(
      auc(
        p,
        rows.map((r) => r.weakFails),
      ),
    ).toBeGreaterThan(0.58);
  });

  it('only ever raises the score, with its reason named', () => {
    const d = classifyDifficulty({
      model: 'm',
      messages: [
        { role: 'user', content: 'Which of the following statements about the Krebs cycle is false?' },
      ],
    });
    const reason = d.reasons.find((r) => r.startsWith('weak model fails'));
    if (reason) expect(reason).toMatch(/\+\d/);
    expect(classifyDifficulty({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).level).toBe(
      'trivial',
    );
  });
});

describe('auc', () => {
  it('is 1 for a perfect ranking, 0.5 for ties, 0 when reversed', () => {
    expect(auc([1, 2, 3, 4], [false, false, true, true])).toBe(1);
    expect(auc([1, 1, 1, 1], [false, true, false, true])).toBe(0.5);
    expect(auc([4, 3, 2, 1], [false, false, true, true])).toBe(0);
  });
});
