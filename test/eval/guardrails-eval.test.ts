/**
 * Regression gate on the held-out test splits (test/eval/guard-splits.ts): the figures the
 * README reports (`npm run eval`), rounded down, must hold. A change that loses recall, or
 * buys it with false alarms, fails here.
 */
import { describe, expect, it } from 'vitest';
import { evaluateSplit } from '../../dataplane/src/pipeline/guardrails/learned/evaluate.ts';
import { evaluateEntities } from '../../dataplane/src/pipeline/guardrails/learned/entities.ts';
import { detect as detectPii } from '../../dataplane/src/pipeline/guardrails/pii.ts';
import { detect as detectSecrets } from '../../dataplane/src/pipeline/guardrails/secrets.ts';
import { learnedSplit, piiSplit, secretsSplit } from './guard-splits.ts';

describe('guardrails on the held-out test split', () => {
  const learned = evaluateSplit(learnedSplit('test'));

  it('prompt injection: recall >= 0.87, false positives on benign look-alikes <= 0.3 % (target 1 %), >= 5 languages', () => {
    const f = learned['prompt-injection'];
    expect(f.recall.rate).toBeGreaterThanOrEqual(0.87);
    expect(f.precision).toBeGreaterThanOrEqual(0.99);
    expect(f.fpLookalike.rate).toBeLessThanOrEqual(0.003);
    const languages = Object.entries(f.recallBy).filter(([k, r]) => k.startsWith('lang:') && r.of >= 20);
    expect(languages.length).toBeGreaterThanOrEqual(8);
    expect(languages.filter(([, r]) => r.rate >= 0.8).length).toBeGreaterThanOrEqual(5);
  });

  it('toxicity: recall >= 0.95 at precision >= 0.98', () => {
    const f = learned.toxicity;
    expect(f.recall.rate).toBeGreaterThanOrEqual(0.95);
    expect(f.precision).toBeGreaterThanOrEqual(0.98);
    expect(f.fpLookalike.rate).toBeLessThanOrEqual(0.01);
  });

  it('secrets: recall >= 0.98 over one sample per gitleaks rule, no false alarm on identifiers and documented keys', () => {
    const f = evaluateEntities(secretsSplit('test'), 'secrets', detectSecrets, { anyCategory: true });
    expect(f.recall.rate).toBeGreaterThanOrEqual(0.98);
    expect(f.falseAlarms.rate).toBeLessThanOrEqual(0.0);
  });

  it('PII: F2 >= 0.95 and every entity kind >= 0.85 recall', () => {
    const f = evaluateEntities(piiSplit('test'), 'pii', detectPii);
    expect(f.f2).toBeGreaterThanOrEqual(0.95);
    const kinds = Object.entries(f.recallBy).filter(([k]) => /^[A-Z_]+$/.test(k));
    expect(kinds.map(([k]) => k)).toEqual(expect.arrayContaining(['PHONE', 'CREDIT_CARD', 'EMAIL', 'IBAN']));
    for (const [kind, r] of kinds) expect(r.rate, kind).toBeGreaterThanOrEqual(0.85);
  });
});
