import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../formats/openai/types.ts';
import { HEADROOM_SHARE, MIN_SAVED_TOKENS, planCompression, worthIt, type PlanInput } from './decide.ts';
import type { Measured } from './types.ts';

/** Messages with given token counts (the counts are what the decisions read). */
const m = (role: ChatMessage['role'], tokens: number, extra: Partial<ChatMessage> = {}): Measured => ({
  message: { role, content: `${role}-${tokens}`, ...extra },
  tokens,
});

const input = (measured: Measured[], over: Partial<PlanInput> = {}): PlanInput => ({
  measured,
  toolTokens: 0,
  thresholdTokens: 1000,
  stepWindow: 1,
  format: 'chat',
  extractionModel: 'cheap',
  ...over,
});

const conversation = [
  m('system', 100),
  m('user', 400),
  m('assistant', 900),
  m('user', 50),
  m('assistant', 100),
  m('user', 50),
];

describe('planCompression', () => {
  it('below_threshold carries tokens and threshold; tool definitions count', () => {
    const p = planCompression(input([m('user', 500)], { toolTokens: 100 }));
    expect(p).toEqual({
      kind: 'pass',
      originalTokens: 600,
      fallback: { reason: 'below_threshold', tokens: 600, threshold: 1000 },
    });
  });

  it('exactly at the threshold is compressed (below means strictly below)', () => {
    const p = planCompression(input(conversation, { thresholdTokens: 1600 }));
    expect(p.kind).toBe('compress');
  });

  it('no_history when zoning leaves History empty', () => {
    const p = planCompression(input([m('system', 100), m('user', 2000)]));
    expect(p.kind === 'pass' && p.fallback).toEqual({ reason: 'no_history' });
  });

  it('insufficient_headroom when Recent + Last exceed 85 % of the original', () => {
    // History 100 of 1000 tokens: Recent + Last = 900 > 850.
    const p = planCompression(
      input([m('user', 50), m('assistant', 50), m('user', 100), m('assistant', 700), m('user', 100)]),
    );
    expect(p.kind === 'pass' && p.fallback).toEqual({ reason: 'insufficient_headroom' });
  });

  it('exactly 85 % is still compressed', () => {
    // Recent + Last = 850 of 1000.
    const p = planCompression(
      input([m('user', 100), m('assistant', 50), m('user', 100), m('assistant', 650), m('user', 100)]),
    );
    expect(HEADROOM_SHARE).toBe(0.85);
    expect(p.kind).toBe('compress');
  });

  it('no_model after zoning, when no extraction model is available', () => {
    const p = planCompression(input(conversation, { extractionModel: undefined }));
    expect(p.kind === 'pass' && p.fallback).toEqual({ reason: 'no_model' });
  });

  it('the fallbacks come in pipeline order: threshold, history, headroom, model', () => {
    const p = planCompression(input([m('user', 10)], { extractionModel: undefined }));
    expect(p.kind === 'pass' && p.fallback.reason).toBe('below_threshold');
    const q = planCompression(input([m('user', 2000)], { extractionModel: undefined }));
    expect(q.kind === 'pass' && q.fallback.reason).toBe('no_history');
  });

  it('a compressible conversation: zones, profile and kept tokens (System + Recent + Last + tools)', () => {
    const p = planCompression(input(conversation, { toolTokens: 20 }));
    expect(p).toMatchObject({
      kind: 'compress',
      originalTokens: 1620,
      profile: 'chat',
      zones: { system: [0], history: [1, 2], recent: [3, 4], last: [5] },
      keptTokens: 100 + 150 + 50 + 20,
      extractionModel: 'cheap',
    });
  });
});

describe('worthIt (no_savings)', () => {
  it('needs 10 % and 256 tokens saved', () => {
    expect(worthIt(10_000, 10_000 - MIN_SAVED_TOKENS)).toBe(false); // 2.56 %
    expect(worthIt(10_000, 9_000)).toBe(true);
    expect(worthIt(10_000, 9_001)).toBe(false);
    expect(worthIt(2_000, 1_700)).toBe(true);
    expect(worthIt(2_000, 1_800)).toBe(false); // 10 % but < 256 tokens
    expect(worthIt(1_000, 1_200)).toBe(false); // grew
  });
});
