import { describe, expect, it } from 'vitest';
import {
  accumulate,
  cellMember,
  deltas,
  emptyCounters,
  logEntry,
  parseCellMember,
  parseLogEntry,
  parseSecurityField,
  securityDeltas,
  securityField,
} from './accumulate.ts';
import { usageRecord } from './fixtures.ts';

describe('accumulate', () => {
  it('adds a record to a row without changing the row', () => {
    const row = emptyCounters();
    const next = accumulate(row, usageRecord({ costUsd: 0.0000125, promptTokens: 7, completionTokens: 3 }));
    expect(row.requests).toBe(0);
    expect(next).toMatchObject({
      requests: 1,
      costMicros: 13,
      promptTokens: 7,
      completionTokens: 3,
      totalTokens: 10,
    });
    expect(accumulate(next, usageRecord({ costUsd: 0.1 })).costMicros).toBe(100_013);
  });

  it('counts nothing it cannot trust: negative or non-finite tokens, non-finite money', () => {
    const c = accumulate(
      emptyCounters(),
      usageRecord({
        promptTokens: -5,
        completionTokens: Number.NaN,
        totalTokens: 2.6,
        costUsd: Number.POSITIVE_INFINITY,
      }),
    );
    expect(c).toMatchObject({ promptTokens: 0, completionTokens: 0, totalTokens: 3, costMicros: 0 });
  });

  it('emits only non-zero deltas, in field order', () => {
    expect(deltas(usageRecord({ promptTokens: 1, completionTokens: 0, costUsd: 0, latencyMs: 0 }))).toEqual([
      ['requests', 1],
      ['euRequests', 1],
      ['promptTokens', 1],
      ['totalTokens', 1],
    ]);
  });
});

describe('security deltas', () => {
  it('counts a request once per guardrail × category × action and sums its findings', () => {
    const r = usageRecord({
      guardrails: {
        action: 'block',
        findings: [
          { guardrail: 'pii', category: 'EMAIL', count: 2, action: 'redact' },
          { guardrail: 'pii', category: 'EMAIL', count: 1, action: 'redact' },
          { guardrail: 'secrets', category: 'aws', count: 1 },
          { guardrail: 'toxicity', category: 'insult', count: 1, action: 'allow' },
        ],
      },
    });
    expect(securityDeltas(r)).toEqual([
      { guardrail: 'pii', category: 'EMAIL', action: 'redact', count: 1, findings: 3 },
      { guardrail: 'secrets', category: 'aws', action: 'block', count: 1, findings: 1 },
    ]);
    expect(securityDeltas(usageRecord())).toEqual([]);
  });
});

describe('names', () => {
  it('round-trip cell members and security fields whatever characters they hold', () => {
    const dims = { keyId: 'ns:x/k%2F', model: 'openai/gpt:4', provider: '' };
    expect(parseCellMember(cellMember(dims))).toEqual(dims);
    const f = { guardrail: 'a:b', category: '%3A', action: 'flag' };
    expect(parseSecurityField(securityField(f))).toEqual(f);
  });

  it('logs the record as JSON and reads back only records', () => {
    const r = usageRecord();
    expect(parseLogEntry(logEntry(r))).toEqual(JSON.parse(JSON.stringify(r)));
    expect(parseLogEntry('{nope')).toBeUndefined();
    expect(parseLogEntry('42')).toBeUndefined();
  });
});
