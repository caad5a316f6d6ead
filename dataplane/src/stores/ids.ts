import { randomFillSync } from 'node:crypto';

const ID_BYTES = 12;
/** Ids drawn per refill: one CSPRNG call per 256 ids instead of one per id (two per metered request). */
const POOL_IDS = 256;
const pool = Buffer.alloc(ID_BYTES * POOL_IDS);
let next = POOL_IDS;

/** 96 random bits, URL-safe, no `:` (Redis members use `:` as a separator). */
export const newId = (): string => {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const start = next++ * ID_BYTES;
  return pool.toString('base64url', start, start + ID_BYTES);
};
