import { describe, expect, it } from 'vitest';
import {
  constraintsText,
  encodeHeaderText,
  fallbackText,
  ratio,
  stateHeaders,
  type StateOutcome,
} from './headers.ts';
import type { ActiveConstraints } from './state.ts';

const constraints = (over: Partial<ActiveConstraints> = {}): ActiveConstraints => ({
  identifiers: { ticket: 'GA-1' },
  values: {},
  actions_taken: [],
  files_modified: [],
  progress: { done: [], current: 'x', next: [] },
  requirements: {},
  errors_encountered: [],
  ...over,
});

const outcome = (over: Partial<StateOutcome> = {}): StateOutcome => ({
  mode: 'state',
  originalTokens: 20_000,
  tokens: 5_000,
  latencyMs: 12.6,
  extractionPromptTokens: 14_000,
  extractionCompletionTokens: 300,
  intent: 'refactor',
  constraints: constraints(),
  fallback: undefined,
  ...over,
});

describe('header arithmetic', () => {
  it('ratio is 1 − result/original to four places, 0 for an empty original', () => {
    expect(ratio(20_000, 5_000)).toBe(0.75);
    expect(ratio(3, 1)).toBe(0.6667);
    expect(ratio(100, 100)).toBe(0);
    expect(ratio(0, 0)).toBe(0);
  });

  it('every header of SPEC.md, integers as integers', () => {
    expect(stateHeaders(outcome())).toEqual({
      'x-gantrystate-mode': 'state',
      'x-gantrystate-original-tokens': '20000',
      'x-gantrystate-tokens': '5000',
      'x-gantrystate-ratio': '0.7500',
      'x-gantrystate-latency-ms': '13',
      'x-gantrystate-extraction-prompt-tokens': '14000',
      'x-gantrystate-extraction-completion-tokens': '300',
      'x-gantrystate-intent': 'refactor',
      'x-gantrystate-constraints': JSON.stringify(constraints()),
    });
  });

  it('a pass-through reports its reason and no intent', () => {
    const h = stateHeaders(
      outcome({
        mode: 'none',
        tokens: 20_000,
        intent: undefined,
        constraints: undefined,
        fallback: { reason: 'below_threshold', tokens: 512, threshold: 8000 },
      }),
    );
    expect(h['x-gantrystate-ratio']).toBe('0.0000');
    expect(h['x-gantrystate-fallback']).toBe('below_threshold(512/8000)');
    expect(h['x-gantrystate-intent']).toBeUndefined();
    expect(fallbackText({ reason: 'no_savings' })).toBe('no_savings');
  });
});

describe('header encoding', () => {
  it('leaves printable ASCII alone and percent-encodes the rest, reversibly', () => {
    const text = 'Fix "ünïcode" 100%\r\nInjected: header\t🚀';
    const enc = encodeHeaderText(text);
    expect(enc).toMatch(/^[\x20-\x7e]*$/);
    expect(enc).not.toMatch(/[\r\n]/);
    expect(decodeURIComponent(enc)).toBe(text);
    expect(encodeHeaderText('a b {"x":1}')).toBe('a b {"x":1}');
  });

  it('cuts at a whole escape', () => {
    const enc = encodeHeaderText('é'.repeat(100), 10);
    expect(enc).toBe('%C3%A9');
    expect(decodeURIComponent(enc)).toBe('é');
  });

  it('constraints too long for a header are trimmed but always parse', () => {
    const identifiers: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) identifiers[`id_${i}`] = `value-${i}-ü`;
    const big = constraints({
      identifiers,
      actions_taken: [{ tool: 't', input: 'i', result: 'r', success: true }],
    });
    const text = constraintsText(big, 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    const parsed = JSON.parse(decodeURIComponent(text)) as ActiveConstraints;
    expect(parsed.identifiers.id_0).toBe('value-0-ü');
    expect(Object.keys(parsed.identifiers).length).toBeLessThan(2000);
  });
});
