import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../accounting/usage.ts';
import { usageRecord } from './fixtures.ts';
import { PackedUsageLog } from './packed-log.ts';

/** Newest first, as the log reads. */
const all = (log: PackedUsageLog): UsageRecord[] =>
  Array.from({ length: log.size }, (_, age) => log.record(age));

/** Records with every optional part in each of its forms. */
function variedRecords(): UsageRecord[] {
  return [
    usageRecord({ id: randomUUID(), tenant: 't' }),
    usageRecord({ tenant: 't', id: 'client-chosen id', deployment: undefined, provider: undefined }),
    usageRecord({ tenant: 't', id: `${randomUUID()}:compression`, provider: 'compression' }),
    usageRecord({ tenant: 't', id: randomUUID().toUpperCase(), status: 429, errorType: 'rate_limited' }),
    usageRecord({
      tenant: 't',
      id: randomUUID(),
      stream: true,
      euResident: false,
      costUsd: 0.1 + 0.2,
      at: 1_795_658_404_511,
      latencyMs: 17.25,
      cache: {
        band: 'DIRECT',
        score: 0.987654321,
        tokensSaved: 228,
        savedUsd: 0.00003,
        creditedUsd: 0.00001,
        latencyMs: 0.4,
        exact: true,
      },
    }),
    usageRecord({
      tenant: 't',
      id: randomUUID(),
      cache: { band: 'MISS', score: undefined, tokensSaved: 0, savedUsd: 0, creditedUsd: 0, latencyMs: 1.5 },
      compression: { ratio: 0.4375, originalTokens: 9000, tokens: 5062, savedUsd: 0.00059 },
    }),
    usageRecord({
      tenant: 't',
      id: randomUUID(),
      cache: {
        band: 'SKIP',
        score: 0.5,
        tokensSaved: 0,
        savedUsd: 0,
        creditedUsd: 0,
        latencyMs: 0,
        exact: false,
      },
    }),
    usageRecord({
      tenant: 't',
      id: randomUUID(),
      guardrails: {
        action: 'block',
        findings: [
          { guardrail: 'pii', category: 'email', count: 2, action: 'redact' },
          { guardrail: 'injection', category: 'jailbreak', count: 1 },
          { guardrail: 'secrets', category: 'aws', count: 3, action: undefined },
        ],
      },
      routing: { level: 'hard', model: 'gpt-4o', effort: 'high' },
    }),
    usageRecord({
      tenant: 't',
      id: randomUUID(),
      guardrails: { action: 'allow', findings: [] },
      routing: { level: 'easy', model: 'gpt-4o-mini', effort: undefined },
    }),
  ];
}

describe('packed request log', () => {
  it('keeps records apart whose strings differ only in where a control character falls', () => {
    const log = new PackedUsageLog('t', 8);
    const a = usageRecord({ tenant: 't', id: randomUUID(), requestedModel: 'x\u0001y', model: 'z' });
    const b = usageRecord({ tenant: 't', id: randomUUID(), requestedModel: 'x', model: 'y\u0001z' });
    const c = usageRecord({ tenant: 't', id: randomUUID(), deployment: '\u0002' });
    const d = usageRecord({ tenant: 't', id: randomUUID(), deployment: undefined });
    for (const r of [a, b, c, d]) log.push(r);
    expect(all(log)).toEqual([d, c, b, a]);
  });

  it('reads back every record equal to the one recorded, optional parts in each of their forms', () => {
    const log = new PackedUsageLog('t', 100);
    const records = variedRecords();
    for (const r of records) log.push(r);
    // toStrictEqual: keys present with undefined, and absent keys, must come back as they were.
    expect(all(log)).toStrictEqual([...records].reverse());
  });

  it('keeps copies: changing a recorded object or a record read back changes nothing held', () => {
    const log = new PackedUsageLog('t', 10);
    const r = usageRecord({
      tenant: 't',
      guardrails: { action: 'flag', findings: [{ guardrail: 'pii', category: 'email', count: 1 }] },
      routing: { level: 'hard', model: 'gpt-4o', effort: undefined },
    });
    const before = structuredClone(r);
    log.push(r);
    r.guardrails!.findings[0]!.count = 99;
    r.routing!.model = 'changed';
    log.record(0).guardrails!.findings.push({ guardrail: 'x', category: 'y', count: 1 });
    expect(log.record(0)).toStrictEqual(before);
  });

  it('holds at most its limit, dropping the oldest first, across the columns growing and the ring wrapping', () => {
    const limit = 150; // past the first allocation (64) and its doubling (128)
    const log = new PackedUsageLog('t', limit);
    const records = Array.from({ length: 1000 }, (_, i) =>
      usageRecord({ tenant: 't', id: i % 7 === 0 ? `plain-${i}` : randomUUID(), at: i, promptTokens: i }),
    );
    for (const [i, r] of records.entries()) {
      log.push(r);
      expect(log.size).toBe(Math.min(i + 1, limit));
    }
    expect(all(log)).toStrictEqual(records.slice(-limit).reverse());
    expect(log.atMs(0)).toBe(999);
    expect(log.atMs(limit - 1)).toBe(1000 - limit);
    expect(() => log.record(limit)).toThrow(RangeError);
  });

  it('lets go of strings and summaries no record still names, so distinct values stay bounded too', () => {
    const log = new PackedUsageLog('t', 20);
    // Every record names a model never seen before (a client can send any model name).
    for (let i = 0; i < 500; i++) log.push(usageRecord({ tenant: 't', model: `model-${i}` }));
    expect(log.distinctDims).toBe(20);
    // The same dimensions over and over are one value.
    for (let i = 0; i < 40; i++) log.push(usageRecord({ tenant: 't', model: 'gpt-4o-mini' }));
    expect(log.distinctDims).toBe(1);
    expect(all(log).every((r) => r.model === 'gpt-4o-mini')).toBe(true);
  });

  it('reads each record with its own dimensions when the only one held is replaced each time', () => {
    const log = new PackedUsageLog('t', 1);
    for (const model of ['a', 'b', 'a', 'a', 'c', 'b']) {
      const r = usageRecord({ tenant: 't', model, id: randomUUID() });
      log.push(r);
      expect(log.record(0)).toStrictEqual(r);
      expect(log.distinctDims).toBe(1);
    }
  });

  it('refuses a limit that is not a whole number above 0', () => {
    expect(() => new PackedUsageLog('t', 0)).toThrow(/above 0/);
    expect(() => new PackedUsageLog('t', 1.5)).toThrow(/above 0/);
  });
});
