import { describe, expect, it } from 'vitest';
import { guessFitting, longestFitting } from './longest-fit.ts';

/** Sizes growing by the given amounts; the answer by brute force, and the probes counted. */
const world = (growth: number[], limit: number) => {
  const sizes = [0];
  for (const g of growth) sizes.push(sizes.at(-1)! + g);
  let probes = 0;
  const fits = (n: number) => {
    probes++;
    return sizes[n]! <= limit;
  };
  let answer = 0;
  while (answer < growth.length && sizes[answer + 1]! <= limit) answer++;
  return { fits, answer, probes: () => probes };
};

describe('longestFitting', () => {
  it('finds the longest run that fits from any guess', () => {
    const growth = Array.from({ length: 300 }, (_, i) => 1 + ((i * 7919) % 13));
    for (const limit of [0, 1, 5, 500, 1234, 100_000])
      for (const guess of [0, 1, 17, 150, 299, 300, 1000]) {
        const w = world(growth, limit);
        expect(longestFitting(growth.length, w.fits, guess)).toBe(w.answer);
      }
  });

  it('costs two probes from a right guess, where a bisection of 4,000 costs twelve', () => {
    const growth = Array.from({ length: 4000 }, () => 40);
    const w = world(growth, 40 * 2500 + 10);
    expect(longestFitting(growth.length, w.fits, 2500)).toBe(2500);
    expect(w.probes()).toBe(2);
  });
});

describe('guessFitting', () => {
  it('interpolates by growth between the sizes of none and all', () => {
    expect(guessFitting([10, 10, 10, 10], 100, 140, 120)).toBe(2);
    expect(guessFitting([10, 10, 10, 10], 100, 140, 140)).toBe(4);
    expect(guessFitting([30, 0, 10], 100, 140, 129)).toBe(0);
    expect(guessFitting([10], 200, 210, 100)).toBe(0);
  });
});
