import { describe, expect, it } from 'vitest';
import { trainingCharge } from './jobs.ts';

describe('trainingCharge', () => {
  it.each([
    [
      'succeeded',
      { status: 'succeeded', trained_tokens: 2_000_000 },
      3,
      { trainedTokens: 2_000_000, costUsd: 6 },
    ],
    [
      'succeeded, nothing trained',
      { status: 'succeeded', trained_tokens: 0 },
      3,
      { trainedTokens: 0, costUsd: 0 },
    ],
    ['running', { status: 'running', trained_tokens: null }, 3, undefined],
    ['failed after some training', { status: 'failed', trained_tokens: 500 }, 3, undefined],
    ['cancelled', { status: 'cancelled', trained_tokens: 500 }, 3, undefined],
    ['no training price', { status: 'succeeded', trained_tokens: 500 }, undefined, undefined],
    ['tokens as text', { status: 'succeeded', trained_tokens: '500' }, 3, undefined],
    ['negative tokens', { status: 'succeeded', trained_tokens: -1 }, 3, undefined],
    ['infinite tokens', { status: 'succeeded', trained_tokens: Infinity }, 3, undefined],
  ] as const)('%s', (_name, job, price, expected) => {
    expect(trainingCharge(job, price)).toEqual(expected);
  });
});
