import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, resolvePolicy } from '../guardrails/index.ts';
import { OPENAI_CATEGORIES } from '../../formats/openai/moderation.ts';
import { GANTRY_CATEGORIES, moderateText } from './builtin.ts';

describe('built-in moderation', () => {
  it('reports every category, scored, for any text', () => {
    const r = moderateText('hello there', DEFAULT_POLICY);
    expect(Object.keys(r.category_scores).sort()).toEqual(
      [...OPENAI_CATEGORIES, ...GANTRY_CATEGORIES].sort(),
    );
    expect(r.flagged).toBe(false);
  });

  it("follows the tenant's policy: a check turned off scores but does not flag", () => {
    const text = 'You are a complete idiot.';
    expect(moderateText(text, DEFAULT_POLICY).categories.harassment).toBe(true);
    const off = moderateText(text, resolvePolicy({ toxicity: { action: 'off' } }));
    expect(off.category_scores.harassment).toBeGreaterThan(0.5);
    expect(off.categories.harassment).toBe(false);
    expect(off.flagged).toBe(false);
  });

  it('counts only the PII kinds the policy names', () => {
    const text = 'Mail me at jane.doe@example.com';
    expect(moderateText(text, DEFAULT_POLICY).categories['gantry/pii']).toBe(true);
    const phonesOnly = moderateText(text, resolvePolicy({ pii: { action: 'flag', entities: ['PHONE'] } }));
    expect(phonesOnly.categories['gantry/pii']).toBe(false);
  });
});
