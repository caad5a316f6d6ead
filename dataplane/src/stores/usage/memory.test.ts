import { describe, expect, it } from 'vitest';
import { usageRecord } from './fixtures.ts';
import { MemoryUsageState, MemoryUsageStore } from './memory.ts';

describe('in-process usage store: remembering record ids', () => {
  it('forgets the oldest id once 10,000 are remembered, and only that one', async () => {
    const store = new MemoryUsageStore(new MemoryUsageState(), { logLimit: 10 });
    const first = usageRecord();
    const second = usageRecord();
    await store.record(first);
    await store.record(second);
    for (let i = 0; i < 9_999; i++) await store.record(usageRecord());
    // 10,001 ids seen: the first is forgotten, the second still caught as a retry.
    expect(await store.record(second)).toBe(false);
    expect(await store.record(first)).toBe(true);
  });

  it('forgets ids when their window ends, on a clock it is given, and catches a retry again after', async () => {
    let now = 1_000;
    const store = new MemoryUsageStore(new MemoryUsageState(), { dedupeMs: 100 }, () => now);
    const a = usageRecord();
    const b = usageRecord();
    await store.record(a);
    now = 1_050;
    await store.record(b);
    now = 1_100;
    expect(await store.record(b)).toBe(false);
    // a's window ended at 1,100; b's runs to 1,150.
    expect(await store.record(a)).toBe(true);
    expect(await store.record(a)).toBe(false);
    now = 1_150;
    expect(await store.record(b)).toBe(true);
  });
});
