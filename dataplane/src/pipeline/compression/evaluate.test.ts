/** The check, as a test: ≥ 60 % fewer tokens on agent traces with 100 % of the facts kept. */
import { describe, expect, it } from 'vitest';
import { fakeExtraction } from '../../fake-provider/extraction.ts';
import { evaluateCase, summarise } from './evaluate.ts';
import { corpus } from './fixtures.ts';

describe('compression corpus', () => {
  const results = corpus().map((g) => evaluateCase(g, fakeExtraction));
  const groups = summarise(results);

  it('is at least 50 conversations, several over 50k tokens', () => {
    expect(results.length).toBeGreaterThanOrEqual(50);
    expect(results.filter((r) => r.originalTokens > 50_000).length).toBeGreaterThanOrEqual(5);
  });

  it('agent traces: at least 60 % fewer tokens, every fact kept', () => {
    const agent = groups.find((g) => g.kind === 'agent')!;
    expect(agent.savings).toBeGreaterThanOrEqual(0.6);
    expect(agent.kept).toBe(agent.facts);
  });

  it('no conversation of any kind loses a fact', () => {
    for (const r of results) expect(r.missing).toEqual([]);
  });
});
