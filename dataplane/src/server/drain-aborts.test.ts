import { describe, expect, it } from 'vitest';
import { DrainAborts } from './drain-aborts.ts';

describe('DrainAborts', () => {
  it('aborts every tracked request at the drain deadline with its reason, and forgets released ones', () => {
    const shutdown = new AbortController();
    const drain = new DrainAborts(shutdown.signal);
    const [a, b, c] = [new AbortController(), new AbortController(), new AbortController()];
    drain.track(a);
    const releaseB = drain.track(b);
    drain.track(c);
    releaseB();
    expect(drain.size).toBe(2);
    shutdown.abort(new Error('drain deadline'));
    expect(a.signal.aborted && c.signal.aborted).toBe(true);
    expect((a.signal.reason as Error).message).toBe('drain deadline');
    expect(b.signal.aborted).toBe(false);
    expect(drain.size).toBe(0);
  });

  it('aborts a request that arrives after the deadline at once', () => {
    const shutdown = new AbortController();
    const drain = new DrainAborts(shutdown.signal);
    shutdown.abort('late');
    const late = new AbortController();
    drain.track(late)();
    expect(late.signal.reason).toBe('late');
    expect(drain.size).toBe(0);
  });

  it('adds one listener to the shutdown signal however many requests it tracks', () => {
    const shutdown = new AbortController();
    let added = 0;
    const add = shutdown.signal.addEventListener.bind(shutdown.signal);
    shutdown.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    const drain = new DrainAborts(shutdown.signal);
    for (let i = 0; i < 1000; i++) drain.track(new AbortController());
    expect(added).toBe(1);
  });
});
