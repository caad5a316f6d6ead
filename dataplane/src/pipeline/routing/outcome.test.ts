import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auc } from './auc.ts';
import { classifyDifficulty } from './classify.ts';
import { extractFeatures } from './features.ts';
import { DENSE_NAMES, denseFeatures, hashedBuckets, HASH_BUCKETS } from './outcome-features.ts';
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

  const probabilities = (rows: OutcomeRow[]): number[] =>
    rows.map((r) =>
      weakFailProbability(
        extractFeatures({ model: 'm', messages: [{ role: 'user', content: r.text }] }),
        r.text,
      ),
    );
  const levelRank = (rows: OutcomeRow[]): number[] =>
    rows.map(
      (r) => RANK[classifyDifficulty({ model: 'm', messages: [{ role: 'user', content: r.text }] }).level],
    );
  const RANK = { trivial: 0, standard: 1, complex: 2 } as const;

  // Floors a little under the measured figures (README "Routing against outcomes"): a
  // retrain or a feature change that loses ranking power fails here.
  it('ranks held-out MMLU subjects by weak-model failure (AUC >= 0.60)', () => {
    const rows = load('mmlu-heldout.jsonl');
    expect(
      auc(
        probabilities(rows),
        rows.map((r) => r.weakFails),
      ),
    ).toBeGreaterThanOrEqual(0.6);
  });

  it('ranks MT-bench, a domain no choice was made on, by weak-model failure (AUC >= 0.63)', () => {
    const rows = load('mt-bench.jsonl');
    const y = rows.map((r) => r.weakFails);
    expect(auc(probabilities(rows), y)).toBeGreaterThanOrEqual(0.63);
    // The level routing acts on tracks it too, if less sharply (three steps, rules first).
    expect(auc(levelRank(rows), y)).toBeGreaterThanOrEqual(0.55);
  });

  // Whole domains it never trained on and no choice was made on (scripts/build-routing-domains.ts).
  // Word problems rank (0.655); code ranks below chance (0.374): the README says so, and the
  // floor only catches a change that makes it worse still.
  it('ranks unseen domains: DRAW-1K word problems (AUC >= 0.63) and HumanEval/MBPP code (>= 0.35)', () => {
    for (const [file, floor] of [
      ['draw.jsonl', 0.63],
      ['code.jsonl', 0.35],
    ] as const) {
      const rows = load(file);
      expect(
        auc(
          probabilities(rows),
          rows.map((r) => r.weakFails),
        ),
      ).toBeGreaterThanOrEqual(floor);
    }
  });

  it('is calibrated on its calibration split and better than the base rate on the test split', () => {
    const dev = load('mmlu-dev.jsonl');
    const devP = probabilities(dev);
    const devRate = dev.filter((r) => r.weakFails).length / dev.length;
    const mean = devP.reduce((s, x) => s + x, 0) / dev.length;
    expect(Math.abs(mean - devRate)).toBeLessThan(0.02);
    const test = load('mmlu-heldout.jsonl');
    const brier = (p: (i: number) => number): number =>
      test.reduce((s, r, i) => s + (p(i) - (r.weakFails ? 1 : 0)) ** 2, 0) / test.length;
    const testP = probabilities(test);
    expect(brier((i) => testP[i] as number)).toBeLessThan(brier(() => devRate));
  });

  it('names its probability among the reasons and only ever raises the level', () => {
    const req = {
      model: 'm',
      messages: [
        {
          role: 'user' as const,
          content: 'Which of the following statements about the Krebs cycle is false?',
        },
      ],
    };
    const d = classifyDifficulty(req);
    expect(d.reasons.some((r) => r.startsWith('weak model fails p='))).toBe(true);
    expect(d.weakFails).toBeGreaterThan(0);
    expect(d.weakFails).toBeLessThan(1);
    expect(classifyDifficulty({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).level).toBe(
      'trivial',
    );
    // Off (threshold 1) versus on: no prompt of the outcome sets goes down a level.
    for (const r of load('mt-bench.jsonl')) {
      const q = { model: 'm', messages: [{ role: 'user' as const, content: r.text }] };
      expect(RANK[classifyDifficulty(q).level]).toBeGreaterThanOrEqual(RANK[classifyDifficulty(q, 1).level]);
    }
  });

  it('makes a request complex when the weak model likely fails, and says so', () => {
    const text =
      'A train leaves at 3:40 pm at 72 km/h and a second one follows at 4:05 pm at 90 km/h on the same track. ' +
      'At what time and distance does the second catch up? Show the calculation.';
    const req = { model: 'm', messages: [{ role: 'user' as const, content: text }] };
    const p = classifyDifficulty(req).weakFails;
    const at = classifyDifficulty(req, p);
    expect(at.level).toBe('complex');
    expect(at.reasons.at(-1)).toMatch(/^weak model likely fails \(p=0\.\d\d >= /);
    const above = classifyDifficulty(req, Math.min(p + 0.01, 1));
    expect(above.reasons.some((r) => r.startsWith('weak model likely fails'))).toBe(false);
  });
});

describe('cross-domain cues', () => {
  const names = (text: string): string[] => {
    const values = denseFeatures(
      extractFeatures({ model: 'm', messages: [{ role: 'user', content: text }] }),
      text,
    );
    return DENSE_NAMES.filter((n, i) => (values[i] as number) > 0 && n.endsWith('_cues'));
  };

  it('tells reasoning, counting, code, writing and advice apart', () => {
    expect(names('Explain why the argument is a paradox, step by step.')).toContain('reasoning_cues');
    expect(names('How many apples are left if the total cost is 12?')).toContain('quantity_cues');
    expect(names('Implement the function in Python with recursion.')).toContain('code_cues');
    expect(names('Write a poem and a catchy slogan for a bakery.')).toEqual(['writing_cues']);
    expect(names('What do you recommend for a first trip to Japan?')).toEqual(['advice_cues']);
  });

  it('measures digits and arithmetic as shares, so length alone does not raise them', () => {
    const share = (text: string, name: (typeof DENSE_NAMES)[number]): number =>
      denseFeatures(extractFeatures({ model: 'm', messages: [{ role: 'user', content: text }] }), text)[
        DENSE_NAMES.indexOf(name)
      ] as number;
    expect(share('Compute 12*7 + 3^2 = ?', 'operator_share')).toBeGreaterThan(0.5);
    expect(share('Compute 12*7 + 3^2 = ? '.repeat(20), 'operator_share')).toBeCloseTo(
      share('Compute 12*7 + 3^2 = ? ', 'operator_share'),
      1,
    );
    expect(share('Tell me about the history of tea.', 'digit_share')).toBe(0);
  });
});

describe('auc', () => {
  it('is 1 for a perfect ranking, 0.5 for ties, 0 when reversed', () => {
    expect(auc([1, 2, 3, 4], [false, false, true, true])).toBe(1);
    expect(auc([1, 1, 1, 1], [false, true, false, true])).toBe(0.5);
    expect(auc([4, 3, 2, 1], [false, false, true, true])).toBe(0);
  });
});
