/**
 * Bounds of the in-process semantic-cache stores from the environment. Unset variables keep
 * the stores' defaults; a value that is not a whole positive number stops the start with a
 * message naming the variable (a typo must not silently mean "unbounded").
 */
export interface CacheMemoryBounds {
  maxEntries?: number;
  maxEntriesPerTenant?: number;
  maxBytes?: number;
  maxBytesPerTenant?: number;
}

const VARIABLES: Readonly<Record<keyof CacheMemoryBounds, string>> = {
  maxEntries: 'GANTRY_CACHE_MAX_ENTRIES',
  maxEntriesPerTenant: 'GANTRY_CACHE_MAX_ENTRIES_PER_TENANT',
  maxBytes: 'GANTRY_CACHE_MAX_BYTES',
  maxBytesPerTenant: 'GANTRY_CACHE_MAX_BYTES_PER_TENANT',
};

export function cacheMemoryFromEnv(env: Readonly<Record<string, string | undefined>>): CacheMemoryBounds {
  const out: CacheMemoryBounds = {};
  for (const [field, name] of Object.entries(VARIABLES) as [keyof CacheMemoryBounds, string][]) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new Error(`${name} must be a whole number above 0, got ${raw}`);
    out[field] = n;
  }
  return out;
}
