/**
 * Bounds of the in-process semantic-cache stores from the environment.
 * Unset variables keep the stores' defaults; bad values stop the start (bounds-env.ts).
 */
import { positiveBoundsFromEnv } from './bounds-env.ts';

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

export const cacheMemoryFromEnv = (env: Readonly<Record<string, string | undefined>>): CacheMemoryBounds =>
  positiveBoundsFromEnv(VARIABLES, env);
