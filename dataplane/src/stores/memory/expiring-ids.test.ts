import { describe, expect, it } from 'vitest';
import { ExpiringIds } from './expiring-ids.ts';

describe('ExpiringIds', () => {
  it('forgets lapsed ids oldest first and stops at the first live one', () => {
    const ids = new ExpiringIds<string>();
    for (let i = 0; i < 5; i++) ids.set(`k${i}`, `v${i}`, 100 + i);
    ids.sweep(102);
    expect(ids.size).toBe(2);
    expect(ids.visited).toBe(4); // k0..k2 dropped, k3 live
    expect(ids.get('k3', 102)).toBe('v3');
    expect(ids.get('k2', 102)).toBeUndefined();
  });

  it('reads an id as gone once its time ran out, even before a sweep reaches it', () => {
    const ids = new ExpiringIds<number>();
    ids.set('live', 1, 200);
    ids.set('behind', 2, 50); // the clock stepped back when this one was set
    ids.sweep(100);
    expect(ids.size).toBe(2);
    expect(ids.get('behind', 100)).toBeUndefined();
    expect(ids.get('live', 100)).toBe(1);
  });

  it('moves a reused id to the back', () => {
    const ids = new ExpiringIds<number>();
    ids.set('a', 1, 10);
    ids.set('b', 2, 20);
    ids.set('a', 3, 30);
    ids.sweep(25);
    expect(ids.get('a', 25)).toBe(3);
    expect(ids.size).toBe(1);
  });
});
