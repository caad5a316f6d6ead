import { describe, expect, it } from 'vitest';
import { combine, dedupeHits, NearHits, type Hit } from './signals.ts';
import { dedupeOverlaps } from './spans.ts';
import type { Finding } from './types.ts';

/** A small deterministic generator, so a failure names its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function hitsOf(rand: () => number, n: number): Hit[] {
  return Array.from({ length: n }, (_, i) => {
    const start = Math.floor(rand() * 2000);
    return {
      category: 'x',
      weight: rand(),
      source: `s${i % 7}`,
      start,
      end: start + 1 + Math.floor(rand() * 60),
    };
  });
}

describe('NearHits', () => {
  it('answers exactly the hits a walk over all of them finds, in their own order', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = random(seed);
      const hits = hitsOf(rand, Math.floor(rand() * 120));
      const near = new NearHits(hits);
      for (let q = 0; q < 20; q++) {
        const from = Math.floor(rand() * 2100) - 50;
        const to = from + Math.floor(rand() * 400) - 20;
        const walk = hits.filter((h) => h.end >= from && h.start <= to);
        expect(near.touching(from, to), `seed ${seed}`).toEqual(walk);
      }
    }
  });
});

describe('combine', () => {
  /** The first version: a walk over touching(), each signal once, in the hits' order. */
  const walk = (near: NearHits<string>, t: Hit, window: number, related: (h: Hit) => boolean): number => {
    const used = new Set<string>();
    let miss = 1;
    for (const h of near.touching(t.start - window, t.end + window)) {
      if (!related(h) || used.has(h.source)) continue;
      used.add(h.source);
      miss *= 1 - h.weight;
    }
    return 1 - miss;
  };

  it('gives bit for bit what a walk over the touching hits gives', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = random(seed);
      // Each hit its own weight, so taking another hit of a signal than the first shows.
      const hits = hitsOf(rand, Math.floor(rand() * 120));
      const near = new NearHits(hits);
      const odd = (h: Hit): boolean => h.start % 3 !== 0;
      for (const target of hits.slice(0, 20))
        for (const [window, related] of [
          [300, () => true],
          [40, odd],
        ] as const)
          expect(combine(near, target, window, related), `seed ${seed}`).toBe(
            walk(near, target, window, related),
          );
    }
  });
});

describe('dedupeHits', () => {
  it('keeps the first hit of each signal at each offset, in order', () => {
    const rand = random(7);
    const hits = hitsOf(rand, 400).map((h) => ({ ...h, start: h.start % 50 }));
    const seen = new Set<string>();
    const expected = hits.filter(
      (h) => !seen.has(`${h.source}@${h.start}`) && !!seen.add(`${h.source}@${h.start}`),
    );
    expect(dedupeHits(hits)).toEqual(expected);
    expect(expected.length).toBeLessThan(hits.length);
  });
});

describe('dedupeOverlaps', () => {
  /** The first version: every span checked against every kept one. */
  const walk = (findings: Finding[]): Finding[] => {
    const ranked = [...findings].sort((a, b) => b.score - a.score || b.end - b.start - (a.end - a.start));
    const kept: Finding[] = [];
    for (const f of ranked) if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f);
    return kept.sort((a, b) => a.start - b.start);
  };

  it('keeps the same spans as a walk over every kept span', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = random(seed);
      const findings: Finding[] = hitsOf(rand, Math.floor(rand() * 150)).map((h) => ({
        guardrail: 'toxicity',
        category: 'insult',
        // Few distinct scores, so ties fall to span length and then to input order.
        score: Math.floor(rand() * 4) / 4,
        start: h.start,
        end: seed % 10 === 0 && rand() < 0.1 ? h.start : h.end,
      }));
      expect(dedupeOverlaps(findings), `seed ${seed}`).toEqual(walk(findings));
    }
  });

  it('keeps disjoint spans among 50,000 findings in one long text', () => {
    const findings: Finding[] = Array.from({ length: 50_000 }, (_, i) => ({
      guardrail: 'toxicity',
      category: 'insult',
      score: (i * 7919) % 97,
      start: i * 10,
      end: i * 10 + 12,
    }));
    const kept = dedupeOverlaps(findings);
    // Every span overlaps its neighbours by 2 characters, so none kept overlaps another.
    for (let i = 1; i < kept.length; i++) expect(kept[i]!.start).toBeGreaterThanOrEqual(kept[i - 1]!.end);
    expect(kept.length).toBeGreaterThan(10_000);
  });
});
