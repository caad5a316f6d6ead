import { describe, expect, it } from 'vitest';
import { MAX_UNBOUNDED_OUTPUT_TOKENS } from '../accounting/reported-usage.ts';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  outputLimits,
  realtimeCostUsd,
  responseEstimateUsd,
  splitUsage,
  type OwnCount,
} from './cost.ts';

const pricing = {
  inputPerMillionTokens: 4,
  outputPerMillionTokens: 16,
  cachedInputPerMillionTokens: 0.4,
  audioInputPerMillionTokens: 32,
  audioOutputPerMillionTokens: 64,
};

/** For reports believed as sent: the gateway's own count plays no part. */
const REPORTED: OwnCount = { inputTokens: 0, producedTokens: 0, maxOutputTokens: Number.MAX_SAFE_INTEGER };

describe('realtime cost', () => {
  it('prices text and audio tokens at their own rates, cached input at the cached rate', () => {
    const split = splitUsage(
      {
        input_tokens: 1_000,
        output_tokens: 500,
        input_token_details: {
          text_tokens: 300,
          audio_tokens: 700,
          cached_tokens: 200,
          cached_tokens_details: { text_tokens: 100, audio_tokens: 100 },
        },
        output_token_details: { text_tokens: 100, audio_tokens: 400 },
      },
      REPORTED,
    );
    expect(split).toEqual({ textIn: 200, audioIn: 600, cachedIn: 200, textOut: 100, audioOut: 400 });
    // 200×4 + 600×32 + 200×0.4 + 100×16 + 400×64 µ$
    expect(realtimeCostUsd(pricing, split)).toBe(
      (200 * 4 + 600 * 32 + 200 * 0.4 + 100 * 16 + 400 * 64) / 1e6,
    );
  });

  it('counts unsplit tokens as text, ignores nonsense, and is free without pricing', () => {
    expect(splitUsage({ input_tokens: 10, output_tokens: 5 }, REPORTED)).toEqual({
      textIn: 10,
      audioIn: 0,
      cachedIn: 0,
      textOut: 5,
      audioOut: 0,
    });
    expect(
      splitUsage(
        { input_tokens: -3, output_tokens: Number.NaN, output_token_details: { audio_tokens: 99 } },
        REPORTED,
      ),
    ).toEqual({ textIn: 0, audioIn: 0, cachedIn: 0, textOut: 0, audioOut: 0 });
    expect(realtimeCostUsd(undefined, splitUsage({ input_tokens: 10 }, REPORTED))).toBe(0);
  });

  it('falls back to the text prices when a deployment has no audio prices', () => {
    const split = splitUsage({ input_tokens: 10, input_token_details: { audio_tokens: 10 } }, REPORTED);
    expect(realtimeCostUsd({ inputPerMillionTokens: 5, outputPerMillionTokens: 0 }, split)).toBe(50 / 1e6);
  });

  it('holds the dearer rates for the output bound', () => {
    expect(responseEstimateUsd(pricing, 100, 1_000)).toBe((100 * 32 + 1_000 * 64) / 1e6);
    expect(outputLimits([undefined, 'inf']).held).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(outputLimits([250, 1_000]).held).toBe(250);
    expect(outputLimits(['x', -1]).held).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
  });

  it('bills an unbounded ("inf") response past the default its hold assumed', () => {
    expect(outputLimits([undefined, 'inf']).billed).toBe(MAX_UNBOUNDED_OUTPUT_TOKENS);
    expect(outputLimits([undefined, undefined]).billed).toBe(MAX_UNBOUNDED_OUTPUT_TOKENS);
    expect(outputLimits([250, 'inf']).billed).toBe(250);
    const reported = {
      input_tokens: 100,
      output_tokens: 6_000,
      output_token_details: { audio_tokens: 6_000 },
    };
    const own: OwnCount = {
      inputTokens: 100,
      producedTokens: 5_000,
      maxOutputTokens: outputLimits(['inf']).billed,
    };
    expect(splitUsage(reported, own).audioOut).toBe(6_000);
  });

  it('reads the bound once for both the hold and the bill', () => {
    const candidates = [undefined, 300, 'inf'];
    let reads = 0;
    const values = candidates[Symbol.iterator].bind(candidates);
    Object.defineProperty(candidates, Symbol.iterator, {
      value: () => {
        reads++;
        return values();
      },
    });
    expect(outputLimits(candidates)).toEqual({ held: 300, billed: 300 });
    // The session read it twice per response before (once for each).
    expect(reads).toBe(1);
  });
});

describe('a realtime usage report is believed only when it can be true', () => {
  const own: OwnCount = { inputTokens: 120, producedTokens: 40, maxOutputTokens: 200 };
  it.each([
    ['1e300 tokens', { input_tokens: 1e300, output_tokens: 1e300 }],
    ['negative counts', { input_tokens: -5, output_tokens: -1 }],
    ['fractions', { input_tokens: 1.5, output_tokens: 2.5 }],
    ['no report', undefined],
  ])('%s: the gateway’s own count bills, as text', (_n, usage) => {
    const split = splitUsage(usage, own);
    expect(split).toEqual({ textIn: 120, audioIn: 0, cachedIn: 0, textOut: 40, audioOut: 0 });
    expect(realtimeCostUsd(pricing, split)).toBe((120 * 4 + 40 * 16) / 1e6);
  });
  it('output beyond the response’s bound is billed at the bound', () => {
    expect(splitUsage({ input_tokens: 100, output_tokens: 999_999_999 }, own).textOut).toBe(200);
  });
});

describe('the response hold bounds its charge', () => {
  it('over random prices and every split of at most the held tokens into text, audio and cached', () => {
    let a = 0x5eed;
    const next = (): number => {
      // mulberry32, seeded: a failure names its case and reproduces.
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const price = (): number => (next() < 0.5 ? Math.round(next() * 100_000) / 1000 : next() * 200);
    for (let trial = 0; trial < 20_000; trial++) {
      const p = {
        inputPerMillionTokens: price(),
        outputPerMillionTokens: price(),
        // Sometimes above the input rate: the hold must take the dearest of the three.
        cachedInputPerMillionTokens: next() < 0.5 ? price() : undefined,
        audioInputPerMillionTokens: next() < 0.5 ? price() : undefined,
        audioOutputPerMillionTokens: next() < 0.5 ? price() : undefined,
      };
      const input = Math.floor(next() * (next() < 0.3 ? 60 : 500_000));
      const output = Math.floor(next() * (next() < 0.3 ? 60 : 50_000));
      const hold = Math.round(responseEstimateUsd(p, input, output) * 1e6);
      const cachedIn = Math.floor(next() * (input + 1));
      const audioIn = Math.floor(next() * (input - cachedIn + 1));
      const audioOut = Math.floor(next() * (output + 1));
      const split = {
        textIn: input - cachedIn - audioIn,
        audioIn,
        cachedIn,
        textOut: output - audioOut,
        audioOut,
      };
      const charge = Math.round(realtimeCostUsd(p, split) * 1e6);
      if (charge > hold)
        throw new Error(`trial ${trial}: ${JSON.stringify({ p, split })} ${charge} > ${hold}`);
    }
  });
});
