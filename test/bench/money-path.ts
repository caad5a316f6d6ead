/**
 * Section "money-path" (issue 3): what the auth + rate-limit + budget path adds to a request.
 * One Gantry serves two keys of one tenant on the same model: a plain key (no rate limit, no
 * budget: the foundation path) and a metered key (requests and tokens per minute, a monthly
 * budget; limits far above what the bench can spend, so every request is admitted). The
 * added latency is the metered key's figure minus the plain key's, measured on the same
 * process in alternating windows (plain, metered, metered, plain, ...) so drift and
 * neighbours weigh on both alike. Run once with Redis stores (a real redis-server) and once
 * with the in-process stores, for comparison. Non-streaming requests only.
 */
import { request } from 'undici';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { atMost, skipped } from './checks.ts';
import { startGantry } from './gantry.ts';
import { runLoad, type Exchange } from './load.ts';
import { sectionList, sectionNumber } from './options.ts';
import { cpuMeter } from './proxy-overhead.ts';
import type { BenchContext, Check, Section, SectionResult, Table } from './section.ts';
import { mergeSamples, summarise, type CellStats, type Samples } from './stats.ts';
import { chatBody, type Target } from './target.ts';
import { startUpstream, type Upstream } from './upstream.ts';

/** Issue 15 (issue 3 asked < 0.5 ms): added over the foundation path, p50. */
export const ADDED_P50_TARGET_MS = 0.3;

export const STORES = ['redis', 'memory'] as const;
export type Store = (typeof STORES)[number];
export const KEYS = ['plain', 'metered'] as const;
export type KeyKind = (typeof KEYS)[number];
export const CONNECTIONS = [1, 16] as const;

const CLIENT_KEYS: Record<KeyKind, string> = {
  plain: 'sk-gantry-bench-plain',
  metered: 'sk-gantry-bench-metered',
};

export interface MoneySettings {
  /** Measured seconds per key and connection count, split over `rounds` windows. */
  seconds: number;
  rounds: number;
  /** Warm-up at the start of each window, on its fresh connections. */
  warmupSeconds: number;
  stores: Store[];
}

export function readMoneySettings(env: NodeJS.ProcessEnv): MoneySettings {
  const stores = sectionList(env, 'BENCH_MONEY_STORES', [...STORES]);
  const unknown = stores.filter((s) => !(STORES as readonly string[]).includes(s));
  if (unknown.length)
    throw new Error(`BENCH_MONEY_STORES: unknown ${unknown.join(', ')}; use ${STORES.join(',')}`);
  return {
    seconds: sectionNumber(env, 'BENCH_MONEY_SECONDS', 3, 'seconds'),
    rounds: sectionNumber(env, 'BENCH_MONEY_ROUNDS', 4, 'count'),
    warmupSeconds: sectionNumber(env, 'BENCH_MONEY_WARMUP_SECONDS', 0.25, 'seconds'),
    stores: stores as Store[],
  };
}

export function moneyConfig(upstreamUrl: string): string {
  return [
    deployment({
      name: 'bench-openai',
      model: 'gpt-4o-mini',
      baseUrl: fakeBase(upstreamUrl),
      capabilities: ['chat', 'streaming'],
      pricing: { inputPerMillionTokens: 0.15, outputPerMillionTokens: 0.6 },
    }),
    // Neither tenant names a guardrail policy, so the default guardrails run for both keys.
    tenant('bench'),
    // The full policy: the metered key's tenant also pays from a prepaid wallet.
    tenant('bench-wallet', ['*'], { wallet: { balanceUsd: 1_000_000 } }),
    apiKey('bench-plain', CLIENT_KEYS.plain, 'bench'),
    apiKey('bench-metered', CLIENT_KEYS.metered, 'bench-wallet', {
      rateLimit: { requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000 },
      budget: { limitUsd: 1_000_000, period: 'monthly' },
    }),
  ].join('');
}

/** Plain, metered, then metered, plain, ...: each key is as often first as second. */
export function windowOrder(round: number): KeyKind[] {
  return round % 2 === 0 ? ['plain', 'metered'] : ['metered', 'plain'];
}

export interface MoneyCell {
  store: Store;
  key: KeyKind;
  connections: number;
  stats: CellStats;
  /** Gantry CPU time per successful request (ms) over the measured windows. */
  gatewayCpuMs: number;
}

export interface MoneyAdded {
  store: Store;
  connections: number;
  p50: number;
  p99: number;
  cpuMs: number;
  /** Metered requests/s as a share of plain. */
  rpsShare: number;
}

/** The metered key's figures minus the plain key's, per store and connection count. */
export function addedByMetering(cells: readonly MoneyCell[]): MoneyAdded[] {
  const out: MoneyAdded[] = [];
  for (const m of cells.filter((c) => c.key === 'metered')) {
    const p = cells.find((c) => c.key === 'plain' && c.store === m.store && c.connections === m.connections);
    if (!p) continue;
    out.push({
      store: m.store,
      connections: m.connections,
      p50: m.stats.p50 - p.stats.p50,
      p99: m.stats.p99 - p.stats.p99,
      cpuMs: m.gatewayCpuMs - p.gatewayCpuMs,
      rpsShare: m.stats.rps / p.stats.rps,
    });
  }
  return out;
}

export interface StoreCost {
  key: KeyKind;
  connections: number;
  p50: number;
  cpuMs: number;
}

/**
 * Redis stores minus in-process stores, key by key. The two run in different Gantry
 * processes one after the other, so this is less controlled than the metered-minus-plain
 * comparison; it shows what the Redis round trips cost each path (the plain key's is its
 * usage record).
 */
export function redisCost(cells: readonly MoneyCell[]): StoreCost[] {
  const out: StoreCost[] = [];
  for (const r of cells.filter((c) => c.store === 'redis')) {
    const m = cells.find((c) => c.store === 'memory' && c.key === r.key && c.connections === r.connections);
    if (!m) continue;
    out.push({
      key: r.key,
      connections: r.connections,
      p50: r.stats.p50 - m.stats.p50,
      cpuMs: r.gatewayCpuMs - m.gatewayCpuMs,
    });
  }
  return out;
}

export function moneyChecks(added: readonly MoneyAdded[], redisMissing: string | undefined): Check[] {
  const name = 'money path added p50 @1 conn (Redis)';
  const target = `<= ${ADDED_P50_TARGET_MS.toFixed(3)} ms`;
  if (redisMissing) return [skipped(name, target, redisMissing)];
  const a = added.find((x) => x.store === 'redis' && x.connections === 1);
  return [atMost({ name, value: a?.p50 ?? NaN, unit: ' ms', digits: 3 }, ADDED_P50_TARGET_MS)];
}

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : '-');
const signedMs = (v: number): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(3)}` : '-');

export function moneyTables(cells: readonly MoneyCell[], added: readonly MoneyAdded[]): Table[] {
  const costs = redisCost(cells);
  const tables: Table[] = [
    {
      title:
        'Money path: one Gantry, plain key vs metered key (rate limit + budget + wallet; default guardrails on both), non-streaming (ms)',
      columns: ['stores', 'key', 'conns', 'req/s', 'p50', 'p99', 'requests', 'errors', 'gw CPU/req'],
      rows: cells.map((c) => [
        c.store,
        c.key,
        String(c.connections),
        c.stats.rps.toFixed(0),
        ms(c.stats.p50),
        ms(c.stats.p99),
        String(c.stats.requests),
        String(c.stats.errors),
        ms(c.gatewayCpuMs),
      ]),
    },
    {
      title: 'Added by the rate-limit + budget + wallet path (metered key minus plain key, same process)',
      columns: ['stores', 'conns', '+p50', '+p99', '+gw CPU/req', 'req/s vs plain'],
      rows: added.map((a) => [
        a.store,
        String(a.connections),
        signedMs(a.p50),
        signedMs(a.p99),
        signedMs(a.cpuMs),
        Number.isFinite(a.rpsShare) ? `${(a.rpsShare * 100).toFixed(0)}%` : '-',
      ]),
    },
  ];
  if (costs.length) {
    tables.push({
      title: 'Redis stores minus in-process stores, same key (two Gantry processes, one after the other)',
      columns: ['key', 'conns', '+p50', '+gw CPU/req'],
      rows: costs.map((c) => [c.key, String(c.connections), signedMs(c.p50), signedMs(c.cpuMs)]),
    });
  }
  return tables;
}

/** A request of `key` to `target`: a non-streaming ~1 KB chat turn. */
export const moneyExchange = (target: Target, key: KeyKind): Exchange => ({
  origin: target.origin,
  path: target.path,
  headers: { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEYS[key]}` },
  body: chatBody(false),
  stream: false,
});

/**
 * One request per key, to prove the config does what the comparison assumes: both answer,
 * and only the metered key goes through the rate limiter (it sets the x-ratelimit headers).
 */
async function probeKeys(target: Target): Promise<void> {
  for (const key of KEYS) {
    const ex = moneyExchange(target, key);
    const res = await request(`${ex.origin}${ex.path}`, {
      method: 'POST',
      headers: ex.headers,
      body: ex.body,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${key} key: HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
    const limited = res.headers['x-ratelimit-limit-requests'] !== undefined;
    if (limited !== (key === 'metered'))
      throw new Error(`${key} key: x-ratelimit-limit-requests ${limited ? 'present' : 'missing'}`);
  }
}

async function measureStore(
  ctx: BenchContext,
  upstream: Upstream,
  store: Store,
  settings: MoneySettings,
  redis: RedisInstance | undefined,
): Promise<{ cells: MoneyCell[]; profileDir?: string }> {
  const target = await startGantry(ctx, upstream.url, {
    config: moneyConfig(upstream.url),
    // Empty means "no Redis" to the data plane, whatever the caller's environment says.
    env: { GANTRY_REDIS_URL: store === 'redis' && redis ? redis.url : '' },
    describe: store === 'redis' ? `Redis stores at ${redis?.url}` : 'in-process stores',
  });
  try {
    ctx.log(`${store}: ${target.label} at ${target.origin} (pid ${target.child?.pid ?? '-'})`);
    await probeKeys(target);
    if (ctx.options.primeSeconds > 0) {
      for (const key of KEYS) {
        const primed = await runLoad(moneyExchange(target, key), {
          connections: CONNECTIONS[CONNECTIONS.length - 1]!,
          warmupMs: 0,
          durationMs: ctx.options.primeSeconds * 1000,
        });
        if (primed.latencyMs.length === 0)
          throw new Error(`${key} key fails every request: ${primed.firstError}`);
      }
    }
    const cells: MoneyCell[] = [];
    const windowMs = (settings.seconds * 1000) / settings.rounds;
    for (const connections of CONNECTIONS) {
      const parts: Record<KeyKind, Samples[]> = { plain: [], metered: [] };
      const cpu: Record<KeyKind, number> = { plain: 0, metered: 0 };
      for (let round = 0; round < settings.rounds; round++) {
        for (const key of windowOrder(round)) {
          await upstream.reset();
          const meter = cpuMeter([target.child]);
          parts[key].push(
            await runLoad(
              moneyExchange(target, key),
              { connections, warmupMs: settings.warmupSeconds * 1000, durationMs: windowMs },
              meter,
            ),
          );
          cpu[key] += meter.used()[0] ?? NaN;
        }
      }
      for (const key of KEYS) {
        const stats = summarise(mergeSamples(parts[key]));
        const gatewayCpuMs = cpu[key] / stats.requests;
        cells.push({ store, key, connections, stats, gatewayCpuMs });
        const errors = stats.errors ? `  ERRORS ${stats.errors} (first: ${stats.firstError})` : '';
        ctx.log(
          `  ${store.padEnd(6)} ${key.padEnd(7)} ${String(connections).padStart(2)} conn ${stats.rps.toFixed(0).padStart(6)} req/s  p50 ${ms(stats.p50)}  p99 ${ms(stats.p99)}  CPU ${ms(gatewayCpuMs)} ms/req${errors}`,
        );
      }
      if (target.child && !target.child.running())
        throw new Error(`gantry died during the ${store} run:\n${target.child.outputTail()}`);
    }
    return { cells, ...(target.profileDir && { profileDir: target.profileDir }) };
  } finally {
    await target.stop();
  }
}

async function run(ctx: BenchContext): Promise<SectionResult> {
  const settings = readMoneySettings(process.env);
  const notes: string[] = [];
  let redis: RedisInstance | undefined;
  let redisMissing: string | undefined = settings.stores.includes('redis')
    ? undefined
    : 'not run (BENCH_MONEY_STORES)';
  if (!redisMissing) {
    try {
      // Started from this process, so it shares the non-gateway cores it is pinned to.
      redis = await startRedis();
      ctx.log(`redis-server at ${redis.url}`);
    } catch (err) {
      redisMissing = `no redis-server: ${(err as Error).message.split('\n')[0]}`;
      ctx.log(redisMissing);
    }
  }
  const upstream = await startUpstream(ctx);
  const cells: MoneyCell[] = [];
  try {
    for (const store of settings.stores) {
      if (store === 'redis' && !redis) continue;
      const measured = await measureStore(ctx, upstream, store, settings, redis);
      cells.push(...measured.cells);
      if (measured.profileDir)
        notes.push(`CPU profile of the ${store} Gantry (both keys, all windows) in ${measured.profileDir}`);
    }
  } finally {
    await upstream.child.stop();
    await redis?.stop();
  }
  const added = addedByMetering(cells);
  for (const c of cells) {
    if (c.stats.errors > 0)
      notes.push(
        `${c.store} ${c.key} ${c.connections} conn: ${c.stats.errors} errors, first: ${c.stats.firstError}`,
      );
  }
  if (redisMissing) notes.push(`Redis stores not measured: ${redisMissing}`);
  notes.push(
    `each key: ${settings.seconds}s per connection count in ${settings.rounds} alternating windows (${settings.warmupSeconds}s warm-up each); both keys write a usage record, only the metered one reserves, settles and rate-limits`,
  );
  return {
    tables: moneyTables(cells, added),
    checks: moneyChecks(added, redisMissing),
    notes,
    data: { settings, cells, added, redisCost: redisCost(cells), ...(redisMissing && { redisMissing }) },
  };
}

export const moneyPath: Section = {
  name: 'money-path',
  title: 'Money path: auth + rate limit + budget, Redis and in-process stores',
  run,
};
