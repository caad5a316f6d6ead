/**
 * Measuring the cache on question pairs: what share of look-alikes (must never hit) and of
 * paraphrases (should hit) reach each threshold, with and without the look-alike guard.
 * Single-turn requests, so the context cosine is 1 and DualScore = alpha·cos(q) + beta.
 */
import { createBuiltinEmbedder } from './builtin-embedder.ts';
import { dot } from './score.ts';
import type { Embedder } from './embedder.ts';
import { extractFacts, factConflict } from './lookalike.ts';
import { operandsSwapped } from './order-guard.ts';

export interface QuestionPair {
  kind: 'lookalike' | 'paraphrase';
  topic: string;
  a: string;
  b: string;
}

export interface CurvePoint {
  threshold: number;
  falseHits: number;
  falseHitsGuarded: number;
  paraphraseHits: number;
  paraphraseHitsGuarded: number;
}

export function parsePairs(jsonl: string): QuestionPair[] {
  return jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as QuestionPair);
}

export interface ScoredPair extends QuestionPair {
  score: number;
  guarded: boolean;
}

export async function scorePairs(
  pairs: readonly QuestionPair[],
  embedder: Embedder = createBuiltinEmbedder(),
  alpha = 0.7,
  beta = 0.3,
): Promise<ScoredPair[]> {
  const out: ScoredPair[] = [];
  for (const p of pairs) {
    const [va, vb] = await embedder.embed([p.a, p.b]);
    const score = alpha * dot(va as Float32Array, vb as Float32Array) + beta;
    out.push({
      ...p,
      score,
      guarded: factConflict(extractFacts(p.a), extractFacts(p.b)) !== undefined || operandsSwapped(p.a, p.b),
    });
  }
  return out;
}

export async function lookalikeCurve(
  pairs: readonly QuestionPair[],
  thresholds: readonly number[],
  embedder?: Embedder,
): Promise<CurvePoint[]> {
  const scored = await scorePairs(pairs, embedder);
  const look = scored.filter((p) => p.kind === 'lookalike');
  const para = scored.filter((p) => p.kind === 'paraphrase');
  const share = (xs: ScoredPair[], t: number, guard: boolean) =>
    xs.length === 0 ? 0 : xs.filter((p) => p.score + 1e-6 >= t && !(guard && p.guarded)).length / xs.length;
  return thresholds.map((t) => ({
    threshold: t,
    falseHits: share(look, t, false),
    falseHitsGuarded: share(look, t, true),
    paraphraseHits: share(para, t, false),
    paraphraseHitsGuarded: share(para, t, true),
  }));
}
