import { describe, expect, it } from 'vitest';
import { WorkQueue } from './queue.ts';

const manualTimers = () => {
  const pending: { fn: () => void; ms: number }[] = [];
  return { pending, setTimer: (fn: () => void, ms: number) => (pending.push({ fn, ms }), {}) };
};

describe('WorkQueue', () => {
  it('de-duplicates keys that wait', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.length).toBe(2);
    expect(await q.take()).toBe('a');
    expect(await q.take()).toBe('b');
    expect(q.length).toBe(0);
  });

  it('a key added while processing runs once more afterwards, not concurrently', async () => {
    const q = new WorkQueue();
    q.add('a');
    const k = await q.take();
    q.add('a');
    q.add('a');
    expect(q.length).toBe(0);
    q.done(k!);
    expect(q.length).toBe(1);
    expect(await q.take()).toBe('a');
  });

  it('take waits for the next add', async () => {
    const q = new WorkQueue();
    const next = q.take();
    q.add('later');
    expect(await next).toBe('later');
  });

  it('failures come back after an exponential, capped backoff; success resets it', async () => {
    const t = manualTimers();
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 350, setTimer: t.setTimer });
    for (const expected of [100, 200, 350, 350]) {
      q.add('k');
      q.done((await q.take())!, true);
      expect(t.pending.pop()?.ms).toBe(expected);
    }
    q.add('k');
    q.done((await q.take())!);
    q.add('k');
    q.done((await q.take())!, true);
    const retry = t.pending.pop()!;
    expect(retry.ms).toBe(100);
    retry.fn();
    expect(await q.take()).toBe('k');
  });

  it('shutDown releases waiting takers', async () => {
    const q = new WorkQueue();
    const next = q.take();
    q.shutDown();
    expect(await next).toBeUndefined();
    q.add('x');
    expect(q.length).toBe(0);
  });
});
