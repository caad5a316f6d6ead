/**
 * Closed-loop load generator: N connections, each sending its next request as soon as the
 * previous answer has been read to the end. Latency is measured with the monotonic clock
 * from just before the request is handed to the pool to the end of the body; for streams
 * the arrival of the first body chunk is the time to first byte.
 */
import { Pool } from 'undici';
import type { Samples } from './stats.ts';

export interface Exchange {
  /** `http://host:port` of the server under test. */
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  stream: boolean;
  /** A new body for each request instead of `body` (e.g. a question never asked before). */
  nextBody?: () => Buffer;
  /** Sees each answer's status and headers, e.g. to count semantic-cache statuses. */
  onResponse?: (statusCode: number, headers: Record<string, string | string[] | undefined>) => void;
}

export interface LoadSpec {
  connections: number;
  warmupMs: number;
  durationMs: number;
}

const ERROR_TEXT_CHARS = 300;
const nsToMs = (ns: bigint): number => Number(ns) / 1e6;

/** Sends one request, reads it to the end, and records it in `into`. */
async function exchangeOnce(pool: Pool, ex: Exchange, into: Samples): Promise<void> {
  const fail = (why: string): void => {
    into.errors++;
    into.firstError ??= why.slice(0, ERROR_TEXT_CHARS);
  };
  // Made before the clock starts: building a body is the client's cost, not the server's.
  const body = ex.nextBody ? ex.nextBody() : ex.body;
  const start = process.hrtime.bigint();
  try {
    const res = await pool.request({ method: 'POST', path: ex.path, headers: ex.headers, body });
    ex.onResponse?.(res.statusCode, res.headers);
    if (res.statusCode !== 200) return fail(`HTTP ${res.statusCode}: ${await res.body.text()}`);
    let first: bigint | undefined;
    // The last two chunks are enough to see the end marker even if it straddles them.
    let previous = '';
    let last = '';
    for await (const chunk of res.body) {
      first ??= process.hrtime.bigint();
      if (ex.stream) {
        previous = last;
        last = (chunk as Buffer).toString('latin1');
      } else {
        last += (chunk as Buffer).toString('latin1');
      }
    }
    const end = process.hrtime.bigint();
    if (ex.stream && !(previous + last).includes('[DONE]')) return fail('stream ended without data: [DONE]');
    if (!ex.stream && !last.includes('"choices"')) return fail(`not a chat completion: ${last}`);
    into.latencyMs.push(nsToMs(end - start));
    if (ex.stream) into.firstByteMs.push(nsToMs((first ?? end) - start));
  } catch (err) {
    fail((err as Error).message);
  }
}

async function closedLoop(
  pool: Pool,
  ex: Exchange,
  connections: number,
  durationMs: number,
): Promise<Samples> {
  const samples: Samples = { elapsedMs: 0, latencyMs: [], firstByteMs: [], errors: 0 };
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(durationMs * 1e6));
  const worker = async (): Promise<void> => {
    while (process.hrtime.bigint() < deadline) await exchangeOnce(pool, ex, samples);
  };
  await Promise.all(Array.from({ length: connections }, worker));
  samples.elapsedMs = nsToMs(process.hrtime.bigint() - started);
  return samples;
}

/** Called right before and right after the measured window (not around the warm-up). */
export interface Meter {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Warms up (connections opened, JIT warm on both sides), then measures on the same pool. */
export async function runLoad(ex: Exchange, spec: LoadSpec, meter?: Meter): Promise<Samples> {
  const pool = new Pool(ex.origin, {
    connections: spec.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  try {
    if (spec.warmupMs > 0) await closedLoop(pool, ex, spec.connections, spec.warmupMs);
    await meter?.start();
    const samples = await closedLoop(pool, ex, spec.connections, spec.durationMs);
    await meter?.stop();
    return samples;
  } finally {
    await pool.close();
  }
}
