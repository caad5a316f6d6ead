/** Bench settings, all from the environment so `npm run bench` needs no arguments. */

export interface BenchOptions {
  /** Measured duration of each cell (BENCH_SECONDS, default 5). */
  seconds: number;
  /** Warm-up before each cell, on the same connections (BENCH_WARMUP_SECONDS, default 1). */
  warmupSeconds: number;
  /**
   * Before its first cell, each target serves this long per mode at the highest concurrency
   * (BENCH_PRIME_SECONDS, default 2), so every cell, the 1-connection ones included, runs on
   * JIT-optimised code rather than on whatever a second of light traffic managed to tier up.
   */
  primeSeconds: number;
  /** Measure the peer gateway (BENCH_PEER=0 skips it). */
  peer: boolean;
  /**
   * The floors to measure (BENCH_FLOOR, default both; `0` none): `node`, a minimal Node proxy
   * doing no work, and `nginx`, a do-nothing nginx reverse proxy (what any proxy adds here).
   */
  floors: Floor[];
  /** npm version spec of @portkey-ai/gateway (BENCH_PEER_VERSION). */
  peerVersion: string;
  /** GANTRY_LOG_LEVEL given to the gateway (BENCH_GANTRY_LOG_LEVEL, default info: `npm start`'s). */
  gantryLogLevel: string;
  /** Write a V8 CPU profile of the Gantry child into .bench/profiles (BENCH_CPU_PROF=1). */
  cpuProfile: boolean;
  /** Checkout whose dataplane/src/main.ts is measured (BENCH_GANTRY_DIR; default this repo). */
  gantryDir?: string;
  /**
   * Node flags of the Gantry child instead of NODE_FLAGS (`npm start`'s), space-separated
   * (BENCH_GANTRY_NODE_FLAGS), to compare GC settings; unset measures what ships.
   */
  gantryNodeFlags?: string[];
  /** Seconds the gateway idles after its cells before a second RSS reading (BENCH_SETTLE_SECONDS, default 10; 0 skips). */
  settleSeconds: number;
  /** Only these proxy-overhead cells, as conns/mode (BENCH_CELLS=1/json,16/stream); all when empty. */
  cells: string[];
  /** Only these sections (BENCH_SECTIONS=a,b); all when empty. */
  sections: string[];
}

export const FLOORS = ['node', 'nginx'] as const;
export type Floor = (typeof FLOORS)[number];

/** BENCH_FLOOR: unset or `1` both floors, `0` none, else a comma-separated list of them. */
export function readFloors(raw: string | undefined): Floor[] {
  if (raw === undefined || raw.trim() === '' || raw.trim() === '1') return [...FLOORS];
  if (raw.trim() === '0') return [];
  const names = list(raw);
  const unknown = names.filter((n) => !(FLOORS as readonly string[]).includes(n));
  if (unknown.length)
    throw new Error(
      `BENCH_FLOOR names ${unknown.join(', ')}; it takes 0, 1 or a list of ${FLOORS.join(', ')}`,
    );
  return FLOORS.filter((f) => names.includes(f));
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`${name} must be a non-negative number of seconds, got "${raw}"`);
  return n;
}

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * A section's own setting (e.g. BENCH_SCAN_ITERATIONS), read by the section itself so the
 * shared options stay small: `fallback` when unset; a count must be a whole number >= 1.
 */
export function sectionNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  kind: 'seconds' | 'count',
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  const ok = kind === 'count' ? Number.isInteger(n) && n >= 1 : Number.isFinite(n) && n > 0;
  if (!ok)
    throw new Error(
      `${name} must be ${kind === 'count' ? 'a whole number >= 1' : 'a positive number of seconds'}, got "${raw}"`,
    );
  return n;
}

/** A section's comma-separated setting; `fallback` when unset or empty. */
export function sectionList(env: NodeJS.ProcessEnv, name: string, fallback: string[]): string[] {
  const items = list(env[name]);
  return items.length ? items : fallback;
}

export function readOptions(env: NodeJS.ProcessEnv): BenchOptions {
  return {
    seconds: positive('BENCH_SECONDS', env.BENCH_SECONDS, 5) || 5,
    warmupSeconds: positive('BENCH_WARMUP_SECONDS', env.BENCH_WARMUP_SECONDS, 1),
    primeSeconds: positive('BENCH_PRIME_SECONDS', env.BENCH_PRIME_SECONDS, 2),
    peer: env.BENCH_PEER !== '0',
    floors: readFloors(env.BENCH_FLOOR),
    peerVersion: env.BENCH_PEER_VERSION || '1.15.2',
    gantryLogLevel: env.BENCH_GANTRY_LOG_LEVEL || 'info',
    cpuProfile: env.BENCH_CPU_PROF === '1',
    ...(env.BENCH_GANTRY_DIR && { gantryDir: env.BENCH_GANTRY_DIR }),
    ...(env.BENCH_GANTRY_NODE_FLAGS !== undefined && {
      gantryNodeFlags: env.BENCH_GANTRY_NODE_FLAGS.split(/\s+/).filter(Boolean),
    }),
    settleSeconds: positive('BENCH_SETTLE_SECONDS', env.BENCH_SETTLE_SECONDS, 10),
    cells: list(env.BENCH_CELLS),
    sections: list(env.BENCH_SECTIONS),
  };
}
