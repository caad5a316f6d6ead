import { describe, expect, it } from 'vitest';
import type { Deployment, ModelRoute } from '../config/snapshot.ts';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  MAX_ESTIMATE_TOKENS,
  MAX_ESTIMATE_USD,
  dearestPricing,
  estimateCost,
  heldTokenCostUsd,
} from './estimate.ts';
import { chargedMicros, heldMicros } from './micros.ts';
import { THINKING_ALLOWANCE_TOKENS } from './thinking.ts';

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
    const e = estimateCost([small, big], 1000, { maxTokens: 500 });
    expect(e.costUsd).toBeCloseTo((1000 * 10 + 500 * 30) / 1e6, 9);
  });

  it('assumes the largest output limit of the deployments, else the default', () => {
    expect(
      estimateCost([route('a', [1, 1, 100]), route('b', [1, 1, 300])], 0, { maxTokens: undefined })
        .maxOutputTokens,
    ).toBe(300);
    expect(estimateCost([route('a', [1, 1])], 0, { maxTokens: undefined }).maxOutputTokens).toBe(
      DEFAULT_MAX_OUTPUT_TOKENS,
    );
    expect(estimateCost([route('a', [1, 1, 100])], 0, { maxTokens: 42 }).maxOutputTokens).toBe(42);
  });

  it('multiplies the output by every sequence generated (n, best_of, prompts)', () => {
    const r = route('a', [0, 1_000_000]);
    // $1 per output token: n=128 of 50 tokens holds $6,400, not $50.
    const e = estimateCost([r], 0, { maxTokens: 50, sequences: 128 });
    expect(e.maxOutputTokens).toBe(6400);
    expect(e.costUsd).toBe(6400);
    // The deployment's limit is per sequence too.
    expect(
      estimateCost([route('b', [0, 1, 1000])], 0, { maxTokens: undefined, sequences: 3 }).maxOutputTokens,
    ).toBe(3000);
    expect(estimateCost([r], 0, { maxTokens: 50, sequences: 0 }).maxOutputTokens).toBe(50);
  });

  it('saturates at bounds the stores can hold instead of producing unsafe integers', () => {
    const dear = route('a', [1e6, 1e6]);
    const e = estimateCost([dear], Number.MAX_SAFE_INTEGER, {
      maxTokens: Number.MAX_SAFE_INTEGER,
      sequences: 128,
    });
    expect(e.maxOutputTokens).toBe(MAX_ESTIMATE_TOKENS);
    expect(e.promptTokens).toBe(MAX_ESTIMATE_TOKENS);
    expect(Number.isSafeInteger(e.promptTokens + e.maxOutputTokens)).toBe(true);
    expect(e.costUsd).toBe(MAX_ESTIMATE_USD);
    expect(Number.isSafeInteger(e.costUsd * 1e6)).toBe(true);
  });
});

describe('holds on prices no CRD admits', () => {
  it('holds the ceiling, never NaN or nothing, for an infinite or overflowing price', () => {
    expect(chargedMicros(Infinity)).toBe(Infinity);
    expect(heldMicros(Number.MAX_VALUE)).toBe(Infinity);
    // ∞ × 0 output tokens is NaN: one such deployment once zeroed the whole model's hold.
    const broken = route('m', [1, Infinity], [1, 2]);
    expect(heldTokenCostUsd([broken], 1000, 0)).toBe(Infinity);
    expect(estimateCost([broken], 1000, { maxTokens: 0 }).costUsd).toBe(MAX_ESTIMATE_USD);
    expect(estimateCost([route('m', [Number.MAX_VALUE, 1])], 10, { maxTokens: 10 }).costUsd).toBe(
      MAX_ESTIMATE_USD,
    );
  });
});

describe('the thinking allowance in a chat hold', () => {
  const gemini = {
    ...route('g', [1, 10]),
    deployments: [{ ...route('g', [1, 10]).deployments[0]!, provider: 'gemini' }] as unknown as Deployment[],
  };
  const plain = route('p', [1, 10]);
  const output = (routes: ModelRoute[], efforts?: (string | undefined)[]) =>
    estimateCost(routes, 0, { maxTokens: 100, sequences: 2, efforts }).maxOutputTokens;

  it('adds what billing allows per sequence when an effort thinks or a deployment is Gemini', () => {
    expect(output([plain], [undefined])).toBe(200);
    expect(output([plain], ['none'])).toBe(200);
    expect(output([plain], [undefined, 'high'])).toBe(2 * (100 + THINKING_ALLOWANCE_TOKENS));
    expect(output([plain, gemini], [undefined])).toBe(2 * (100 + THINKING_ALLOWANCE_TOKENS));
  });

  it('leaves endpoints that are not chat alone', () => {
    expect(output([gemini])).toBe(200);
  });
});
