import { describe, expect, it } from 'vitest';
import { cacheMemoryFromEnv } from './cache-bounds-env.ts';

describe('cacheMemoryFromEnv', () => {
  it('reads the four bounds and leaves unset ones to the stores', () => {
    expect(cacheMemoryFromEnv({})).toEqual({});
    expect(
      cacheMemoryFromEnv({
        GANTRY_CACHE_MAX_ENTRIES: '1000',
        GANTRY_CACHE_MAX_ENTRIES_PER_TENANT: '200',
        GANTRY_CACHE_MAX_BYTES: '',
        GANTRY_CACHE_MAX_BYTES_PER_TENANT: '1048576',
      }),
    ).toEqual({ maxEntries: 1000, maxEntriesPerTenant: 200, maxBytesPerTenant: 1048576 });
  });

  it.each(['0', '-5', '1.5', 'lots', '1e400'])('refuses %s, naming the variable', (value) => {
    expect(() => cacheMemoryFromEnv({ GANTRY_CACHE_MAX_ENTRIES_PER_TENANT: value })).toThrow(
      /GANTRY_CACHE_MAX_ENTRIES_PER_TENANT must be a whole number above 0/,
    );
  });
});
