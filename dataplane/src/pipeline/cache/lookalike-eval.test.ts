import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lookalikeCurve, parsePairs, scorePairs } from './lookalike-eval.ts';
import { BUILTIN_THRESHOLDS } from './policy.ts';

const load = (name: string) =>
  parsePairs(readFileSync(new URL(`../../../../test/data/cache/${name}`, import.meta.url), 'utf8'));

describe.each(['lookalikes.jsonl', 'lookalikes.holdout.jsonl'])('the default cache on %s', (file) => {
  const pairs = load(file);

  it('never serves a look-alike at the builtin thresholds, and still serves most paraphrases', async () => {
    const [point] = await lookalikeCurve(pairs, [BUILTIN_THRESHOLDS.tweak]);
    expect(point!.falseHitsGuarded).toBe(0);
    expect(point!.paraphraseHitsGuarded).toBeGreaterThanOrEqual(0.75);
  });

  it('needs the guard: without it look-alikes reach the serving bands', async () => {
    const [point] = await lookalikeCurve(pairs, [BUILTIN_THRESHOLDS.tweak]);
    expect(point!.falseHits).toBeGreaterThan(0);
  });

  it('has no duplicate pairs', async () => {
    const scored = await scorePairs(pairs);
    expect(new Set(scored.map((p) => `${p.a}\n${p.b}`)).size).toBe(pairs.length);
  });
});
