import { describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../accounting/tokens.ts';
import { agentTrace } from './fixtures.ts';
import { cheapCount } from './measure.ts';
import { prepareCompression } from './prepare.ts';

describe('prepareCompression gate', () => {
  const policy = { thresholdTokens: 8000, stepWindow: 4 };

  it('characters bound tokens from above, so a short request passes without the tokenizer', () => {
    const req = { model: 'm', messages: [{ role: 'user' as const, content: 'Hello there, how are you?' }] };
    const p = prepareCompression(req, policy, 'chat', 'cheap');
    expect(p.plan).toEqual({
      kind: 'pass',
      originalTokens: cheapCount(req).estimate,
      fallback: { reason: 'below_threshold', tokens: cheapCount(req).estimate, threshold: 8000 },
    });
    expect(p.measured).toEqual([]);
  });

  it('the bound holds on real conversations (upper ≥ the real count)', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const req = agentTrace(seed, seed * 3).request;
      expect(cheapCount(req).upper).toBeGreaterThanOrEqual(estimatePromptTokens(req));
    }
  });

  it('past the bound the real count decides', () => {
    const req = agentTrace(4, 12).request;
    const p = prepareCompression(req, policy, 'chat', 'cheap');
    expect(p.plan.originalTokens).toBe(estimatePromptTokens(req));
    expect(p.plan.kind).toBe('compress');
    expect(p.extraction?.model).toBe('cheap');
  });
});
