/**
 * Section "money-ab": the money path of this checkout against a baseline checkout's, in one run.
 * Both Gantry children serve money-path's config on the same core, fake upstream and
 * redis-server; at one connection (issue 15's target) each window loads one checkout's plain
 * or metered key, in an order that turns every round (A plain, A metered, B metered, B plain,
 * then the reverse), so drift and neighbours on a shared machine weigh on all four alike.
 * Reported per checkout: p50 of each key and metered minus plain, the gateway's CPU per request,
 * and Redis' own script time per request (INFO commandstats, evalsha and eval). Each checkout has
 * its own Redis database, so neither window's script cost depends on the other checkout's keys. Only run when
 * BENCH_MONEY_BASELINE names the baseline checkout (it is built there with `npm run build`).
 *
 *   BENCH_SECTIONS=money-ab BENCH_MONEY_BASELINE=<checkout> npm run bench
 */
import { Redis } from 'ioredis';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { startGantry } from './gantry.ts';
import { runLoad } from './load.ts';
import { KEYS, moneyConfig, moneyExchange, readMoneySettings, type KeyKind } from './money-path.ts';
import { cpuMeter } from './proxy-overhead.ts';
import type { BenchContext, Section, SectionResult, Table } from './section.ts';
import { mergeSamples, summarise, type Samples } from './stats.ts';
import type { Target } from './target.ts';
import { startUpstream } from './upstream.ts';

export const CHECKOUTS = ['baseline', 'this'] as const;
export type Checkout = (typeof CHECKOUTS)[number];

/** Every (checkout, key) window of one round; odd rounds run the even order backwards. */
export function abOrder(round: number): [Checkout, KeyKind][] {
  const order: [Checkout, KeyKind][] = [
    ['baseline', 'plain'],
    ['baseline', 'metered'],
    ['this', 'metered'],
    ['this', 'plain'],
  ];
  return round % 2 === 0 ? order : order.reverse();
}

interface Window {
  samples: Samples;
  cpuMs: number;
  redisUsec: number;
  scripts: number;
}

export interface AbCell {
  checkout: Checkout;
  key: KeyKind;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  cpuMs: number;
  /** Redis' script time (evalsha and eval, µs) per request. */
  redisUs: number;
  /** Scripts run per request: 1 for the plain key's record, 2 for the metered key (admission, settlement). */
  scripts: number;
}

function cellOf(checkout: Checkout, key: KeyKind, windows: readonly Window[]): AbCell {
  const stats = summarise(mergeSamples(windows.map((w) => w.samples)));
  const sum = (f: (w: Window) => number) => windows.reduce((n, w) => n + f(w), 0);
  return {
    checkout,
    key,
    p50: stats.p50,
    p99: stats.p99,
    requests: stats.requests,
    errors: stats.errors,
    cpuMs: sum((w) => w.cpuMs) / stats.requests,
    redisUs: sum((w) => w.redisUsec) / stats.requests,
    scripts: sum((w) => w.scripts) / (stats.requests + stats.errors),
  };
}

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : '-');

export function abTables(cells: readonly AbCell[]): Table[] {
  const find = (c: Checkout, k: KeyKind) => cells.find((x) => x.checkout === c && x.key === k);
  return [
    {
      title:
        'Money path A/B at 1 connection, Redis stores: baseline checkout vs this one, alternating windows',
      columns: [
        'checkout',
        'key',
        'p50',
        'p99',
        'requests',
        'errors',
        'gw CPU/req',
        'Redis µs/req',
        'scripts/req',
      ],
      rows: cells.map((c) => [
        c.checkout,
        c.key,
        ms(c.p50),
        ms(c.p99),
        String(c.requests),
        String(c.errors),
        ms(c.cpuMs),
        c.redisUs.toFixed(1),
        c.scripts.toFixed(2),
      ]),
    },
    {
      title: 'Added by the metered key (metered minus plain, same checkout)',
      columns: ['checkout', '+p50', '+gw CPU/req', '+Redis µs/req'],
      rows: CHECKOUTS.flatMap((c) => {
        const [p, m] = [find(c, 'plain'), find(c, 'metered')];
        return p && m
          ? [[c, ms(m.p50 - p.p50), ms(m.cpuMs - p.cpuMs), (m.redisUs - p.redisUs).toFixed(1)]]
          : [];
      }),
    },
  ];
}

async function run(ctx: BenchContext): Promise<SectionResult> {
  const baseline = process.env.BENCH_MONEY_BASELINE;
  // A comparison, not a target: without a baseline there is nothing to run or check.
  if (!baseline)
    return {
      tables: [],
      checks: [],
      notes: ['not run: BENCH_MONEY_BASELINE names no baseline checkout'],
      data: {},
    };
  const settings = readMoneySettings(process.env);
  const redis: RedisInstance = await startRedis();
  const admin = new Redis(redis.url);
  const upstream = await startUpstream(ctx);
  const targets = new Map<Checkout, Target>();
  try {
    for (const [db, checkout] of CHECKOUTS.entries()) {
      const options = checkout === 'baseline' ? { ...ctx.options, gantryDir: baseline } : ctx.options;
      targets.set(
        checkout,
        await startGantry({ ...ctx, options }, upstream.url, {
          config: moneyConfig(upstream.url),
          // Databases 1 and 2: the same key names, apart, on the one server.
          env: { GANTRY_REDIS_URL: `${redis.url}/${db + 1}` },
          describe: `${checkout}, Redis stores`,
        }),
      );
    }
    if (ctx.options.primeSeconds > 0)
      for (const target of targets.values())
        for (const key of KEYS)
          await runLoad(moneyExchange(target, key), {
            connections: 16,
            warmupMs: 0,
            durationMs: ctx.options.primeSeconds * 1000,
          });
    // EVAL too: a script whose SHA the server lost is sent whole once.
    const evalsha = async (): Promise<{ calls: number; usec: number }> => {
      const stats = await admin.info('commandstats');
      const total = { calls: 0, usec: 0 };
      for (const m of stats.matchAll(/cmdstat_(?:eval|evalsha):calls=(\d+),usec=(\d+)/g)) {
        total.calls += Number(m[1]);
        total.usec += Number(m[2]);
      }
      return total;
    };
    const windows = new Map<string, Window[]>();
    const windowMs = (settings.seconds * 1000) / settings.rounds;
    for (let round = 0; round < settings.rounds; round++) {
      for (const [checkout, key] of abOrder(round)) {
        const target = targets.get(checkout)!;
        await upstream.reset();
        // Gateway CPU and Redis script time over the measured requests only (not the warm-up).
        const cpu = cpuMeter([target.child]);
        let u0 = { calls: 0, usec: 0 };
        let u1 = u0;
        const samples = await runLoad(
          moneyExchange(target, key),
          { connections: 1, warmupMs: settings.warmupSeconds * 1000, durationMs: windowMs },
          {
            start: async () => {
              await cpu.start();
              u0 = await evalsha();
            },
            stop: async () => {
              u1 = await evalsha();
              await cpu.stop();
            },
          },
        );
        const list = windows.get(`${checkout}:${key}`) ?? [];
        list.push({
          samples,
          cpuMs: cpu.used()[0] ?? NaN,
          redisUsec: u1.usec - u0.usec,
          scripts: u1.calls - u0.calls,
        });
        windows.set(`${checkout}:${key}`, list);
      }
    }
    const cells = CHECKOUTS.flatMap((c) => KEYS.map((k) => cellOf(c, k, windows.get(`${c}:${k}`) ?? [])));
    for (const c of cells)
      ctx.log(
        `  ${c.checkout.padEnd(8)} ${c.key.padEnd(7)} p50 ${ms(c.p50)}  CPU ${ms(c.cpuMs)} ms/req  Redis ${c.redisUs.toFixed(1)} µs/req`,
      );
    return {
      tables: abTables(cells),
      checks: [],
      notes: [
        `baseline: ${baseline}; ${settings.seconds}s per checkout and key in ${settings.rounds} windows at 1 connection`,
      ],
      data: { settings, baseline, cells },
    };
  } finally {
    for (const t of targets.values()) await t.stop();
    await upstream.child.stop();
    admin.disconnect();
    await redis.stop();
  }
}

export const moneyAb: Section = {
  name: 'money-ab',
  title: 'Money path A/B: this checkout against a baseline checkout, Redis stores, 1 connection',
  run,
};
