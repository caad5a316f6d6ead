/**
 * The budget's promise, as a property: a request's hold is never below what any deployment it
 * may be served by charges for at most the held tokens, however those prompt tokens split into
 * cached and not, over random price tables (decimal prices where float noise bites, random
 * doubles, cached rates above and below the input rate) and token counts, and exhaustively over
 * small counts. And the hold is not wasteful: at most a micro-dollar above the dearest charge.
 */
import { describe, expect, it } from 'vitest';
import type { Deployment, ModelRoute, Pricing } from '../config/snapshot.ts';
import { costUsd } from './cost.ts';
import { estimateCost } from './estimate.ts';
import { chargedMicros, heldMicros } from './micros.ts';

/** mulberry32: small and seeded, so a failure names its case and reproduces. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const micros = (usd: number): number => Math.round(usd * 1e6);

const route = (model: string, prices: readonly Pricing[]): ModelRoute => ({
  model,
  fallbacks: [],
  capabilities: new Set(['chat']),
  ownedBy: 'openai',
  deployments: prices.map((pricing, i) => ({ name: `${model}-${i}`, pricing })) as unknown as Deployment[],
});

/** Prices as manifests write them (0.15, 2.5, 30) or arbitrary doubles; a cached rate sometimes, above input sometimes. */
function randomPricing(next: () => number): Pricing {
  const price = (): number =>
    next() < 0.5 ? Math.round(next() * 100_000) / 1000 : next() < 0.1 ? 0 : next() * 10 ** (4 * next() - 1);
  const p: Pricing = { inputPerMillionTokens: price(), outputPerMillionTokens: price() };
  if (next() < 0.5) p.cachedInputPerMillionTokens = next() < 0.7 ? p.inputPerMillionTokens * next() : price();
  return p;
}

function randomTokens(next: () => number): number {
  const r = next();
  return r < 0.3
    ? Math.floor(next() * 50)
    : r < 0.9
      ? Math.floor(next() * 200_000)
      : Math.floor(next() * 2e9);
}

/** Every usage worth checking below (prompt, completion): the bounds, and random ones under them. */
function usagesUnder(
  next: () => number,
  prompt: number,
  completion: number,
): { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } }[] {
  const at = (p: number, c: number, cached: number) => ({
    prompt_tokens: p,
    completion_tokens: c,
    prompt_tokens_details: { cached_tokens: cached },
  });
  const out = [at(prompt, completion, 0), at(prompt, completion, prompt)];
  for (let i = 0; i < 4; i++) {
    const p = Math.floor(next() * (prompt + 1));
    out.push(at(p, Math.floor(next() * (completion + 1)), Math.floor(next() * (p + 1))));
  }
  out.push(at(prompt, completion, Math.floor(next() * (prompt + 1))));
  return out;
}

describe('the hold bounds every charge it may be settled with', () => {
  it('holds a prompt-heavy request at the input-dear deployment, not the one dearest by price sum', () => {
    // The reviewer's model: A dear on input and served first, B dearer by input + output.
    const mixed = route('mixed', [
      { inputPerMillionTokens: 10, outputPerMillionTokens: 0.1 },
      { inputPerMillionTokens: 1, outputPerMillionTokens: 30 },
    ]);
    const hold = estimateCost([mixed], 4248, { maxTokens: 1 }).costUsd;
    const chargeAtA = costUsd(mixed.deployments[0]!.pricing, { prompt_tokens: 4248, completion_tokens: 1 });
    // 42,480.1 µ$, charged up.
    expect(chargeAtA).toBe(0.042481);
    expect(hold).toBeGreaterThanOrEqual(chargeAtA);
    // And an output-heavy one at B.
    const chargeAtB = costUsd(mixed.deployments[1]!.pricing, { prompt_tokens: 10, completion_tokens: 4000 });
    expect(estimateCost([mixed], 10, { maxTokens: 4000 }).costUsd).toBeGreaterThanOrEqual(chargeAtB);
  });

  it('holds the cached rate when a deployment charges cached tokens above its input rate', () => {
    const odd = route('odd', [
      { inputPerMillionTokens: 1, outputPerMillionTokens: 1, cachedInputPerMillionTokens: 5 },
    ]);
    const charge = costUsd(odd.deployments[0]!.pricing, {
      prompt_tokens: 1000,
      completion_tokens: 0,
      prompt_tokens_details: { cached_tokens: 1000 },
    });
    expect(estimateCost([odd], 1000, { maxTokens: 0 }).costUsd).toBeGreaterThanOrEqual(charge);
  });

  it('over 20,000 random price tables and token counts: hold ≥ every deployment’s charge, and ≤ the dearest + 1 µ$', () => {
    const next = seeded(0x90ad);
    for (let trial = 0; trial < 20_000; trial++) {
      const routes = Array.from({ length: 1 + Math.floor(next() * 3) }, (_, r) =>
        route(
          `m${r}`,
          Array.from({ length: 1 + Math.floor(next() * 3) }, () => randomPricing(next)),
        ),
      );
      const prompt = randomTokens(next);
      const completion = randomTokens(next);
      const hold = micros(estimateCost(routes, prompt, { maxTokens: completion }).costUsd);
      let dearest = 0;
      for (const r of routes)
        for (const d of r.deployments)
          for (const usage of usagesUnder(next, prompt, completion)) {
            const charge = micros(costUsd(d.pricing, usage));
            dearest = Math.max(dearest, charge);
            if (charge > hold)
              throw new Error(
                `trial ${trial}: ${JSON.stringify(d.pricing)} charges ${charge} µ$ for ${JSON.stringify(usage)}, held ${hold} µ$`,
              );
          }
      expect(hold, `trial ${trial}`).toBeLessThanOrEqual(dearest + 1);
    }
  });

  it('exhaustively for small counts at decimal prices, where float noise sits on whole micro-dollars', () => {
    const prices = [0, 0.02, 0.1, 0.15, 0.3, 0.6, 1, 2.5, 3, 10, 15, 30];
    const tables: Pricing[] = [];
    for (const input of prices)
      for (const output of [0.1, 0.6, 30])
        for (const cached of [undefined, 0.1, 0.3, 40])
          tables.push({
            inputPerMillionTokens: input,
            outputPerMillionTokens: output,
            cachedInputPerMillionTokens: cached,
          });
    for (const pricing of tables) {
      const r = route('m', [pricing]);
      for (let prompt = 0; prompt <= 40; prompt += 1)
        for (let completion = 0; completion <= 40; completion += 4) {
          const hold = micros(estimateCost([r], prompt, { maxTokens: completion }).costUsd);
          for (let cached = 0; cached <= prompt; cached++) {
            const charge = micros(
              costUsd(pricing, {
                prompt_tokens: prompt,
                completion_tokens: completion,
                prompt_tokens_details: { cached_tokens: cached },
              }),
            );
            if (charge > hold)
              throw new Error(
                `${JSON.stringify(pricing)} ${prompt}/${cached}/${completion}: ${charge} > ${hold}`,
              );
          }
        }
    }
  });
});

describe('micro-dollar rounding', () => {
  it('charges round up: 74 embedding tokens at $0.02/M (1.48 µ$) pay 2 µ$, a paid request never 0', () => {
    expect(
      costUsd(
        { inputPerMillionTokens: 0.02, outputPerMillionTokens: 0 },
        { prompt_tokens: 74, completion_tokens: 0 },
      ),
    ).toBe(0.000002);
    expect(chargedMicros(1.48)).toBe(2);
    expect(chargedMicros(2.48)).toBe(3);
    expect(chargedMicros(0.02)).toBe(1);
    expect(chargedMicros(0)).toBe(0);
  });

  it('float noise on a whole amount is not rounded up: 100 tokens at $0.07/M is 7 µ$', () => {
    expect(100 * 0.07).toBeGreaterThan(7);
    expect(chargedMicros(100 * 0.07)).toBe(7);
    expect(
      costUsd(
        { inputPerMillionTokens: 0.07, outputPerMillionTokens: 0 },
        { prompt_tokens: 100, completion_tokens: 0 },
      ),
    ).toBe(0.000007);
    // A hold of the same amount is no larger.
    expect(heldMicros(100 * 0.07)).toBe(7);
    expect(heldMicros(6400 * 1e6)).toBe(6400 * 1e6);
  });

  it('is monotone, and a hold is never below the charge of the same amount', () => {
    const next = seeded(7);
    for (let i = 0; i < 100_000; i++) {
      const a = next() * 10 ** (16 * next() - 2);
      const b = a + (next() < 0.5 ? a * Number.EPSILON * Math.floor(next() * 8) : next() * 3);
      const [ca, cb, ha] = [chargedMicros(a), chargedMicros(b), heldMicros(a)];
      // Plain checks in the loop: 300,000 expect() calls take seconds.
      if (cb < ca || ha < ca || ha > ca + 1) throw new Error(`${a} → ${ca} held ${ha}; ${b} → ${cb}`);
    }
  });
});
