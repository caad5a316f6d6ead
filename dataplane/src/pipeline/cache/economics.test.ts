import { describe, expect, it } from 'vitest';
import type { Pricing } from '../../config/snapshot.ts';
import type { ChatCompletion, ChatRequest } from '../../formats/openai/types.ts';
import type { CacheEntry } from '../../stores/cache-entries/types.ts';
import { callCostUsd, hitSaving, tweakWorthIt, walletCreditUsd } from './economics.ts';
import { buildCacheEntry, entryServes, isStorable, takesExactDigest } from './entry.ts';
import { partitionKey } from '../../stores/cache-entries/partition.ts';
import { DEFAULT_SAVINGS_SHARE, resolveCachePolicy, tenantCacheEnabled, tenantTier } from './policy.ts';
import { estimateTweakTokens, tweakRequest } from './tweak.ts';

const gpt4o: Pricing = { inputPerMillionTokens: 2.5, outputPerMillionTokens: 10 };
const mini: Pricing = { inputPerMillionTokens: 0.15, outputPerMillionTokens: 0.6 };

const completion = (
  content: string | null,
  finish: ChatCompletion['choices'][number]['finish_reason'] = 'stop',
): ChatCompletion => ({
  id: 'c',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
  usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
});

const req: ChatRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'Explain TCP slow start.' }],
};
const parts = {
  query: 'Explain TCP slow start.',
  context: '',
  partition: partitionKey('acme', 'openai', 'h'),
};

describe('tweakWorthIt', () => {
  it('runs TWEAK only when the saving strictly exceeds the adaptation cost', () => {
    expect(tweakWorthIt(0.01, 0.001)).toBe(true);
    expect(tweakWorthIt(0.001, 0.001)).toBe(false);
    expect(tweakWorthIt(0.0001, 0.001)).toBe(false);
    expect(tweakWorthIt(0, 0)).toBe(false);
    expect(tweakWorthIt(Number.NaN, 0)).toBe(false);
  });

  it('is taken for an expensive model adapted by a cheap one, declined the other way round', () => {
    const entry = buildCacheEntry({
      parts,
      req,
      response: completion('x'.repeat(2000)),
      now: 0,
      ttlSeconds: 60,
    });
    const tweak = tweakRequest(entry, 'Explain TCP slow start briefly.', 'gpt-4o-mini', req);
    const tokens = estimateTweakTokens(tweak, entry);
    const full = { promptTokens: 1000, completionTokens: entry.completionTokens };
    expect(tweakWorthIt(callCostUsd(gpt4o, full), callCostUsd(mini, tokens))).toBe(true);
    expect(tweakWorthIt(callCostUsd(mini, full), callCostUsd(gpt4o, tokens))).toBe(false);
    // Without pricing the full call "costs" nothing: never worth adapting.
    expect(tweakWorthIt(callCostUsd(undefined, full), callCostUsd(mini, tokens))).toBe(false);
  });
});

describe('tweakRequest', () => {
  it('asks the tweak model to adapt the cached answer to the new question', () => {
    const entry = buildCacheEntry({
      parts,
      req,
      response: completion('Slow start doubles cwnd.'),
      now: 0,
      ttlSeconds: 60,
    });
    const t = tweakRequest(entry, 'What does slow start do to cwnd?', 'gpt-4o-mini', {
      ...req,
      max_tokens: 100,
    });
    expect(t.model).toBe('gpt-4o-mini');
    expect(t.stream).toBe(false);
    expect(t.tools).toBeUndefined();
    const user = t.messages[1]?.content as string;
    expect(user).toContain('Explain TCP slow start.');
    expect(user).toContain('Slow start doubles cwnd.');
    expect(user).toContain('What does slow start do to cwnd?');
    expect(t.max_tokens).toBe(100);
    expect(estimateTweakTokens(t, entry)).toEqual({
      promptTokens: expect.any(Number),
      completionTokens: 100,
    });
  });
});

describe('hitSaving', () => {
  const fullCall = { promptTokens: 1000, completionTokens: 500 };
  it('DIRECT and REUSE save the whole call', () => {
    for (const band of ['DIRECT', 'REUSE'] as const)
      expect(hitSaving({ band, fullCall, fullPricing: gpt4o })).toEqual({
        savedUsd: 0.0075,
        tokensSaved: 1500,
      });
  });
  it('TWEAK saves the call less the adaptation', () => {
    expect(
      hitSaving({
        band: 'TWEAK',
        fullCall,
        fullPricing: gpt4o,
        adaptation: { promptTokens: 700, completionTokens: 500 },
        adaptationPricing: mini,
      }),
    ).toEqual({ savedUsd: 0.0075 - 0.000405, tokensSaved: 300 });
  });
  it('MISS and unpriced models save nothing', () => {
    expect(hitSaving({ band: 'MISS', fullCall, fullPricing: gpt4o })).toEqual({
      savedUsd: 0,
      tokensSaved: 0,
    });
    expect(hitSaving({ band: 'DIRECT', fullCall, fullPricing: undefined }).savedUsd).toBe(0);
  });
});

describe('walletCreditUsd', () => {
  it('credits the tier share of the saving, rounded down to the micro-dollar', () => {
    expect(walletCreditUsd(0.0075, 'pro', DEFAULT_SAVINGS_SHARE)).toBe(0.00075);
    expect(walletCreditUsd(0.0075, 'enterprise', DEFAULT_SAVINGS_SHARE)).toBe(0.0015);
    expect(walletCreditUsd(0.0075, 'free', DEFAULT_SAVINGS_SHARE)).toBe(0);
    expect(walletCreditUsd(0.000019, 'pro', DEFAULT_SAVINGS_SHARE)).toBe(0.000001);
    expect(walletCreditUsd(0.000009, 'pro', DEFAULT_SAVINGS_SHARE)).toBe(0);
    expect(walletCreditUsd(1, 'unknown', DEFAULT_SAVINGS_SHARE)).toBe(0);
    expect(walletCreditUsd(1, 'constructor', DEFAULT_SAVINGS_SHARE)).toBe(0);
    expect(walletCreditUsd(-1, 'pro', DEFAULT_SAVINGS_SHARE)).toBe(0);
    expect(walletCreditUsd(2, 'vip', { vip: 150 })).toBe(2);
  });
});

describe('stored answers', () => {
  it('stores complete text answers only', () => {
    expect(isStorable(completion('hi'))).toBe(true);
    expect(isStorable(completion('hi', 'length'))).toBe(true);
    expect(isStorable(completion(null))).toBe(false);
    expect(isStorable(completion('hi', 'content_filter'))).toBe(false);
    expect(isStorable(completion('', 'tool_calls'))).toBe(false);
    const refusal = completion('no');
    refusal.choices[0]!.message.refusal = 'I cannot help with that.';
    expect(isStorable(refusal)).toBe(false);
    expect(isStorable({ ...completion('x'), choices: [] })).toBe(false);
  });

  it('lets the newest answer take the exact digest, unless it is cut and the held one is complete', () => {
    expect(takesExactDigest(completion('a'), undefined)).toBe(true);
    expect(takesExactDigest(completion('a'), completion('b'))).toBe(true);
    expect(takesExactDigest(completion('a'), completion('b', 'length'))).toBe(true);
    expect(takesExactDigest(completion('a', 'length'), completion('b', 'length'))).toBe(true);
    expect(takesExactDigest(completion('a', 'length'), undefined)).toBe(true);
    expect(takesExactDigest(completion('a', 'length'), completion('b'))).toBe(false);
  });

  it('builds an entry from the answer, its usage and the policy TTL', () => {
    const e = buildCacheEntry({
      parts,
      req: { ...req, max_tokens: 900 },
      response: completion('x'),
      now: 1000,
      ttlSeconds: 60,
      meta: 'm',
    });
    expect(e).toMatchObject({
      partition: parts.partition,
      createdAt: 1000,
      expiresAt: 61_000,
      query: parts.query,
      promptTokens: 1000,
      completionTokens: 500,
      maxTokens: 900,
      meta: 'm',
    });
    expect(e.id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    const noUsage = buildCacheEntry({
      parts,
      req,
      response: { ...completion('x'.repeat(40)), usage: undefined },
      now: 0,
      ttlSeconds: 1,
    });
    expect(noUsage.completionTokens).toBe(10);
    expect(noUsage.promptTokens).toBeGreaterThan(0);
  });

  it('serves a request only an answer that fits its limit', () => {
    const entry = (finish: 'stop' | 'length', maxTokens?: number): CacheEntry =>
      buildCacheEntry({
        parts,
        req: { ...req, max_tokens: maxTokens },
        response: completion('x', finish),
        now: 0,
        ttlSeconds: 60,
      });
    const complete = entry('stop');
    expect(entryServes(complete, req)).toBe(true);
    expect(entryServes(complete, { ...req, max_tokens: 500 })).toBe(true);
    expect(entryServes(complete, { ...req, max_tokens: 499 })).toBe(false);
    expect(entryServes(complete, { ...req, max_tokens: 10_000, max_completion_tokens: 100 })).toBe(false);
    const cut = entry('length', 500);
    expect(entryServes(cut, { ...req, max_tokens: 500 })).toBe(true);
    expect(entryServes(cut, { ...req, max_tokens: 800 })).toBe(false);
    expect(entryServes(cut, req)).toBe(false);
  });
});

describe('policy', () => {
  it('fills SPEC.md defaults, with thresholds that follow the embedder (minilm by default)', () => {
    expect(resolveCachePolicy({ embeddingModel: 'builtin' }).thresholds).toEqual({
      direct: 0.98,
      reuse: 0.95,
      tweak: 0.92,
    });
    expect(resolveCachePolicy({ embeddingModel: 'embed-small' }).thresholds).toEqual({
      direct: 0.95,
      reuse: 0.9,
      tweak: 0.85,
    });
    expect(resolveCachePolicy({ thresholds: { direct: 0.9, reuse: 0.8, tweak: 0.7 } }).thresholds).toEqual({
      direct: 0.9,
      reuse: 0.8,
      tweak: 0.7,
    });
    expect(resolveCachePolicy(undefined)).toEqual({
      alpha: 0.7,
      beta: 0.3,
      thresholds: { direct: 0.97, reuse: 0.95, tweak: 0.93 },
      tweakModel: undefined,
      embeddingModel: 'minilm',
      ttlSeconds: 86_400,
      savingsShare: { free: 0, pro: 10, enterprise: 20 },
    });
    expect(resolveCachePolicy({ alpha: 0.5, ttlSeconds: 60 })).toMatchObject({
      alpha: 0.5,
      beta: 0.3,
      ttlSeconds: 60,
    });
  });
  it('has the cache on unless the tenant turns it off; no tier means free', () => {
    expect(tenantCacheEnabled({})).toBe(true);
    expect(tenantCacheEnabled({ cache: { enabled: false } })).toBe(false);
    expect(tenantTier({})).toBe('free');
    expect(tenantTier({ tier: 'pro' })).toBe('pro');
  });
});
