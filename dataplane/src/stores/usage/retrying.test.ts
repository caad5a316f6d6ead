import { describe, expect, it } from 'vitest';
import type { UsageRecord, UsageStore } from '../../accounting/usage.ts';
import { StoreUnavailableError } from '../errors.ts';
import { usageRecord } from './fixtures.ts';
import { MemoryUsageStore } from './memory.ts';
import { RetryingUsageRecorder } from './retrying.ts';

/** A memory store whose record() can be switched to fail. */
function flaky(): { store: UsageStore; fail: (how: 'down' | 'bug' | 'no') => void; written: UsageRecord[] } {
  const inner = new MemoryUsageStore();
  const written: UsageRecord[] = [];
  let mode: 'down' | 'bug' | 'no' = 'no';
  const store: UsageStore = {
    record: async (r) => {
      if (mode === 'down') throw new StoreUnavailableError('usage.record', 'connection refused');
      if (mode === 'bug') throw new Error('ERR bad script');
      const applied = await inner.record(r);
      if (applied) written.push(r);
      return applied;
    },
    rollups: (q) => inner.rollups(q),
    logs: (q) => inner.logs(q),
    security: (q) => inner.security(q),
    dimensions: (t) => inner.dimensions(t),
    tenants: () => inner.tenants(),
  };
  return { store, fail: (how) => (mode = how), written };
}

describe('RetryingUsageRecorder', () => {
  it('writes at once when the store is up', async () => {
    const { store, written } = flaky();
    const recorder = new RetryingUsageRecorder(store);
    recorder.record(usageRecord());
    await recorder.flush();
    expect(written).toHaveLength(1);
    expect(recorder.pending).toBe(0);
  });

  it('keeps records while the store is unreachable and writes them, in order, when it is back', async () => {
    const { store, fail, written } = flaky();
    const errors: unknown[] = [];
    const recorder = new RetryingUsageRecorder(store, { retryMs: 10, onError: (e) => errors.push(e) });
    fail('down');
    const records = [usageRecord(), usageRecord(), usageRecord()];
    for (const r of records) recorder.record(r);
    await recorder.flush();
    expect(recorder.pending).toBe(3);
    expect(errors[0]).toBeInstanceOf(StoreUnavailableError);
    fail('no');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(recorder.pending).toBe(0);
    expect(written.map((r) => r.id)).toEqual(records.map((r) => r.id));
    await recorder.close();
  });

  it('drops the oldest beyond its bound and counts what it dropped', async () => {
    const { store, fail, written } = flaky();
    const recorder = new RetryingUsageRecorder(store, { retryMs: 60_000, maxPending: 2 });
    fail('down');
    const records = [usageRecord(), usageRecord(), usageRecord()];
    for (const r of records) recorder.record(r);
    await recorder.flush();
    expect(recorder.pending).toBe(2);
    expect(recorder.dropped).toBe(1);
    fail('no');
    await recorder.close();
    expect(written.map((r) => r.id)).toEqual([records[1]!.id, records[2]!.id]);
  });

  it('gives up on a record the store refuses for a reason a retry cannot fix', async () => {
    const { store, fail } = flaky();
    const recorder = new RetryingUsageRecorder(store, { retryMs: 10 });
    fail('bug');
    recorder.record(usageRecord());
    await recorder.flush();
    expect(recorder.pending).toBe(0);
    expect(recorder.dropped).toBe(1);
    await recorder.close();
  });
});
