import { describe, expect, it } from 'vitest';
import { TenantBound } from './tenant-bound.ts';

describe('TenantBound', () => {
  it('evicts from the largest tenant first past the global bound', () => {
    const b = new TenantBound({ maxEntries: 4, maxBytes: 1000 });
    expect(b.added('a', 'a1', 1)).toEqual([]);
    expect(b.added('b', 'b1', 1)).toEqual([]);
    expect(b.added('b', 'b2', 1)).toEqual([]);
    expect(b.added('b', 'b3', 1)).toEqual([]);
    expect(b.added('a', 'a2', 1)).toEqual([{ tenant: 'b', key: 'b1' }]);
    expect(b.usage('a')).toEqual({ entries: 2, bytes: 2 });
    expect(b.usage()).toEqual({ entries: 4, bytes: 4 });
  });

  it('evicts by bytes from the tenant holding the most bytes', () => {
    const b = new TenantBound({ maxEntries: 100, maxBytes: 100 });
    b.added('small', 's1', 10);
    b.added('big', 'g1', 50);
    expect(b.added('big', 'g2', 50)).toEqual([{ tenant: 'big', key: 'g1' }]);
    expect(b.usage('small').entries).toBe(1);
  });

  it('caps a tenant on its own bound, oldest first, never the entry just written', () => {
    const b = new TenantBound({
      maxEntries: 100,
      maxBytes: 1000,
      maxEntriesPerTenant: 2,
      maxBytesPerTenant: 50,
    });
    b.added('a', 'a1', 1);
    b.added('a', 'a2', 1);
    expect(b.added('a', 'a3', 1)).toEqual([{ tenant: 'a', key: 'a1' }]);
    expect(b.added('a', 'huge', 80)).toEqual([
      { tenant: 'a', key: 'a2' },
      { tenant: 'a', key: 'a3' },
    ]);
    expect(b.usage('a')).toEqual({ entries: 1, bytes: 80 });
  });

  it('counts a rewrite once, as the newest', () => {
    const b = new TenantBound({ maxEntries: 2, maxBytes: 1000 });
    b.added('a', 'x', 5);
    b.added('a', 'y', 5);
    expect(b.added('a', 'x', 7)).toEqual([]);
    expect(b.usage('a')).toEqual({ entries: 2, bytes: 12 });
    expect(b.added('a', 'z', 1)).toEqual([{ tenant: 'a', key: 'y' }]);
    b.removed('a', 'x');
    b.removed('a', 'unknown');
    expect(b.usage('a')).toEqual({ entries: 1, bytes: 1 });
  });
});
