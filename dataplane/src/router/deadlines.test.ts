import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from './deadlines.ts';

describe('attempt deadlines', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const deadlines = () =>
    new Deadlines({
      tickMs: 100,
      coarseFromMs: 5_000,
      now: () => performance.now(),
      onError: () => undefined,
    });

  it('keeps long deadlines on time when the wall clock steps back or forward', () => {
    // The production defaults: the shared tick must not read the wall clock.
    const d = new Deadlines();
    const late = vi.fn();
    const early = vi.fn();
    d.arm(10_000, late);
    vi.advanceTimersByTime(5_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    vi.advanceTimersByTime(5_100);
    expect(late).toHaveBeenCalledTimes(1);
    d.arm(10_000, early);
    vi.setSystemTime(Date.now() + 3_600_000);
    vi.advanceTimersByTime(9_800);
    expect(early).not.toHaveBeenCalled();
    vi.advanceTimersByTime(300);
    expect(early).toHaveBeenCalledTimes(1);
  });

  it('fires every due deadline when one handler throws, and reports the throw', () => {
    const errors: unknown[] = [];
    const d = new Deadlines({
      tickMs: 100,
      coarseFromMs: 5_000,
      now: () => performance.now(),
      onError: (err) => errors.push(err),
    });
    const after = vi.fn();
    d.arm(6_000, () => {
      throw new Error('abort failed');
    });
    d.arm(6_000, after);
    vi.advanceTimersByTime(6_100);
    expect(after).toHaveBeenCalledTimes(1);
    expect(errors.map((e) => (e as Error).message)).toEqual(['abort failed']);
    expect(d.pending).toBe(0);
  });

  it('fires a long deadline on the first tick at or after it, never before', () => {
    const d = deadlines();
    const fired = vi.fn();
    d.arm(5_050, fired);
    vi.advanceTimersByTime(5_049);
    expect(fired).not.toHaveBeenCalled();
    // Due at 5,050 ms; the tick at 5,100 ms sees it.
    vi.advanceTimersByTime(51);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(d.pending).toBe(0);
  });

  it('never fires a disarmed deadline, and disarming twice is harmless', () => {
    const d = deadlines();
    const fired = vi.fn();
    const disarm = d.arm(10_000, fired);
    vi.advanceTimersByTime(4_000);
    disarm();
    disarm();
    vi.advanceTimersByTime(20_000);
    expect(fired).not.toHaveBeenCalled();
  });

  it('runs the shared tick only while something is armed', () => {
    const d = deadlines();
    const disarm = d.arm(60_000, () => undefined);
    expect(d.ticking).toBe(true);
    disarm();
    vi.advanceTimersByTime(100);
    expect(d.ticking).toBe(false);
    d.arm(60_000, () => undefined);
    expect(d.ticking).toBe(true);
  });

  it('gives a short limit a precise timer of its own', () => {
    const d = deadlines();
    const fired = vi.fn();
    d.arm(30, fired);
    expect(d.ticking).toBe(false);
    vi.advanceTimersByTime(29);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('fires each of several long deadlines once, in its own tick', () => {
    const d = deadlines();
    const order: string[] = [];
    d.arm(6_000, () => order.push('a'));
    d.arm(5_000, () => order.push('b'));
    const disarmC = d.arm(5_500, () => order.push('c'));
    disarmC();
    vi.advanceTimersByTime(5_000);
    expect(order).toEqual(['b']);
    vi.advanceTimersByTime(1_000);
    expect(order).toEqual(['b', 'a']);
  });
});
