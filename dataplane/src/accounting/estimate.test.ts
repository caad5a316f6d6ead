import { describe, expect, it } from 'vitest';
import type { Deployment, ModelRoute } from '../config/snapshot.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS, dearestPricing, estimateCost } from './estimate.ts';

const route = (model: string, ...prices: [number, number, number?][]): ModelRoute => ({
  model,
  fallbacks: [],
  capabilities: new Set(['chat']),
  ownedBy: 'openai',
  deployments: prices.map(([input, output, maxOutputTokens], i) => ({
    name: `${model}-${i}`,
    pricing: { inputPerMillionTokens: input, outputPerMillionTokens: output },
    maxOutputTokens,
  })) as unknown as Deployment[],
});

describe('estimateCost', () => {
  it('prices at the dearest deployment of every reachable model', () => {
    const small = route('small', [1, 2], [3, 4]);
    const big = route('big', [10, 30]);
    expect(dearestPricing(small)).toEqual({ inputPerMillionTokens: 3, outputPerMillionTokens: 4 });
    expect(dearestPricing(small, big)).toEqual({ inputPerMillionTokens: 10, outputPerMillionTokens: 30 });
    const e = estimateCost([small, big], 1000, 500);
    expect(e.costUsd).toBeCloseTo((1000 * 10 + 500 * 30) / 1e6, 9);
  });

  it('assumes the largest output limit of the deployments, else the default', () => {
    expect(
      estimateCost([route('a', [1, 1, 100]), route('b', [1, 1, 300])], 0, undefined).maxOutputTokens,
    ).toBe(300);
    expect(estimateCost([route('a', [1, 1])], 0, undefined).maxOutputTokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(estimateCost([route('a', [1, 1, 100])], 0, 42).maxOutputTokens).toBe(42);
  });
});
