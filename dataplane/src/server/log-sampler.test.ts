import { describe, expect, it } from 'vitest';
import { LogSampler } from './log-sampler.ts';

describe('LogSampler', () => {
  it('lets the first event of each interval through and counts the quiet ones into it', () => {
    let now = 1_000;
    const s = new LogSampler(10_000, () => now);
    expect(s.take()).toBe(0);
    now += 1;
    expect(s.take()).toBeUndefined();
    now += 9_998;
    expect(s.take()).toBeUndefined();
    now += 1;
    expect(s.take()).toBe(2);
    expect(s.take()).toBeUndefined();
    now += 60_000;
    expect(s.take()).toBe(1);
  });
});
