import { describe, expect, it } from 'vitest';
import { billedCeiling, outgrowsHold, readCap, SessionCap, statedCap } from './output-cap.ts';

describe('readCap / statedCap', () => {
  it('takes whole positive numbers and "inf", nothing else', () => {
    expect([
      readCap(10.7),
      readCap('inf'),
      readCap(0),
      readCap(-1),
      readCap('10'),
      readCap(Infinity),
    ]).toEqual([10, 'inf', undefined, undefined, undefined, undefined]);
    expect(statedCap({ max_response_output_tokens: 5 })).toBe(5);
    expect(statedCap({ max_output_tokens: 'inf', max_response_output_tokens: 5 })).toBe('inf');
    expect(statedCap(null)).toBeUndefined();
  });
});

describe('SessionCap', () => {
  it('holds on the looser of the confirmed cap and the updates not yet answered', () => {
    const cap = new SessionCap();
    cap.confirmed({ max_output_tokens: 100 }, false);
    expect(cap.forHold()).toBe(100);
    cap.sent('a', { max_output_tokens: 1 });
    cap.sent('b', { max_output_tokens: 500 });
    expect(cap.forHold()).toBe(500);
    cap.refused('b');
    expect(cap.forHold()).toBe(100);
    // The upstream answers 'a': its cap is now the session's.
    cap.confirmed({ max_output_tokens: 1 }, true);
    expect(cap.forHold()).toBe(1);
  });

  it('never takes a refused update, and keeps the confirmed cap when the echo has none', () => {
    const cap = new SessionCap();
    cap.sent('x', { voice: 'nope', max_output_tokens: 1 });
    expect(cap.forHold()).toBe('inf');
    cap.refused('x');
    cap.sent('y', { instructions: 'hi' });
    cap.confirmed({ instructions: 'hi' }, true);
    expect(cap.forHold()).toBe('inf');
  });
});

describe('billedCeiling / outgrowsHold', () => {
  it('bounds a bill by the held cap only when the upstream echoes that very number', () => {
    expect(billedCeiling(50, { max_output_tokens: 50 }, 262_144)).toBe(50);
    expect(billedCeiling(1, { max_output_tokens: 'inf' }, 262_144)).toBe(262_144);
    expect(billedCeiling(1, { max_output_tokens: 4_096 }, 262_144)).toBe(262_144);
    expect(billedCeiling(50, {}, 262_144)).toBe(262_144);
    expect(billedCeiling('inf', { max_output_tokens: 'inf' }, 262_144)).toBe(262_144);
  });

  it('sees a response running under a looser cap than the hold as not that hold’s', () => {
    expect(outgrowsHold(1, { max_output_tokens: 'inf' })).toBe(true);
    expect(outgrowsHold(1, { max_output_tokens: 4_096 })).toBe(true);
    expect(outgrowsHold(4_096, { max_output_tokens: 100 })).toBe(false);
    expect(outgrowsHold(100, { max_output_tokens: 100 })).toBe(false);
    expect(outgrowsHold('inf', { max_output_tokens: 'inf' })).toBe(false);
    expect(outgrowsHold(1, {})).toBe(false);
  });
});
