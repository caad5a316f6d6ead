import { describe, expect, it } from 'vitest';
import { allocate, scoreMessage, shorten, WEIGHTS } from './importance.ts';
import type { Measured } from './types.ts';

describe('scoreMessage', () => {
  it('recency grows from oldest (0) to newest (1)', () => {
    expect(scoreMessage('x', 10, 0, 5).recency).toBe(0);
    expect(scoreMessage('x', 10, 4, 5).recency).toBe(1);
    expect(scoreMessage('x', 10, 0, 1).recency).toBe(1);
  });

  it('each signal raises the score', () => {
    const base = scoreMessage('the weather was nice', 5, 0, 2).score;
    expect(scoreMessage('TypeError: x is undefined, tests failed', 8, 0, 2).errors).toBeGreaterThan(0);
    expect(scoreMessage('TypeError: x is undefined, tests failed', 8, 0, 2).score).toBeGreaterThan(base);
    expect(scoreMessage('We decided we must use Postgres instead', 8, 0, 2).decisions).toBeGreaterThan(0);
    expect(scoreMessage('see src/a/b.ts and userId 42 in `cfg.port`', 12, 0, 2).information).toBeGreaterThan(
      0,
    );
    expect(WEIGHTS.recency + WEIGHTS.errors + WEIGHTS.decisions + WEIGHTS.information).toBeCloseTo(1);
  });

  it('stays within 0..1', () => {
    const s = scoreMessage('error '.repeat(100) + 'must '.repeat(100), 10, 3, 4);
    expect(s.score).toBeLessThanOrEqual(1);
    expect(s.score).toBeGreaterThanOrEqual(0);
  });
});

describe('allocate', () => {
  const h = (tokens: number): Measured => ({ message: { role: 'user', content: '' }, tokens });
  const score = (score: number) => ({ recency: 0, errors: 0, decisions: 0, information: 0, score });

  it('everything whole when it fits', () => {
    expect(allocate([h(10), h(20)], [score(0), score(1)], 100)).toEqual([10, 20]);
  });

  it('most important whole first, the rest keep a floor', () => {
    expect(allocate([h(500), h(500), h(500)], [score(0.1), score(0.9), score(0.5)], 700, 50)).toEqual([
      50, 500, 150,
    ]);
  });
});

describe('shorten', () => {
  it('keeps head and tail and says how much went', () => {
    const text = `HEAD ${'x'.repeat(1000)} TAIL`;
    const s = shorten(text, 50);
    expect(s.startsWith('HEAD')).toBe(true);
    expect(s.endsWith('TAIL')).toBe(true);
    expect(s).toContain('characters omitted');
    expect(shorten('short', 50)).toBe('short');
  });
});
