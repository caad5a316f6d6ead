import { describe, expect, it } from 'vitest';
import { cascadeCost, failsCaughtAtBudget } from './routing-cascade.ts';

describe('cascade cost', () => {
  const unsure = [0.9, 0.4, 0.05, 0.0];
  const weakFails = [true, false, true, false];
  const strongFails = [false, true, false, false];

  it('escalates only rows above the threshold and scores the mixed answers', () => {
    // t = 0.3: rows 0 and 1 go up; the strong model is right on 0, wrong on 1; the weak model
    // keeps 2 (wrong) and 3 (right): 2 of 4 correct, 1 of 2 weak failures caught.
    expect(cascadeCost(unsure, weakFails, strongFails, 0.3)).toEqual({
      escalated: 0.5,
      failsCaught: 0.5,
      accuracy: 0.5,
    });
    // Strictly above: a row at exactly t stays with the weak model.
    expect(cascadeCost(unsure, weakFails, strongFails, 0.05).escalated).toBe(0.5);
    // t = 0.01 adds row 2, which the strong model gets right: 3 of 4.
    expect(cascadeCost(unsure, weakFails, strongFails, 0.01)).toEqual({
      escalated: 0.75,
      failsCaught: 1,
      accuracy: 0.75,
    });
  });

  it('counts failures among the highest-scored rows at a fixed budget', () => {
    expect(failsCaughtAtBudget([0.1, 0.2, 0.9, 0.3], weakFails, 1)).toBe(0.5);
    expect(failsCaughtAtBudget([0.1, 0.2, 0.9, 0.3], weakFails, 0)).toBe(0);
    // Ties keep row order, so the budget does not depend on sort stability.
    expect(failsCaughtAtBudget([0.5, 0.5, 0.5, 0.5], weakFails, 1)).toBe(0.5);
  });
});
