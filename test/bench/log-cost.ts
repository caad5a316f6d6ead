/**
 * Section "log-cost" (issue 15): what info-level logging (one line per request, `npm start`'s
 * default) costs against warn (no per-request line). Two Gantry processes on the same config
 * and core, one per level, measured in alternating windows (info, warn, warn, info, ...) at 16
 * connections, non-streaming, so drift and neighbours weigh on both alike. Only the process
 * being measured has load.
 */
import { atMost } from './checks.ts';
import { startGantry } from './gantry.ts';
import { runLoad, type Exchange } from './load.ts';
import { sectionNumber } from './options.ts';
import { cpuMeter } from './proxy-overhead.ts';
import type { BenchContext, Check, Section, SectionResult, Table } from './section.ts';
import { mergeSamples, summarise, type CellStats, type Samples } from './stats.ts';
import { chatBody, type Target } from './target.ts';
import { startUpstream } from './upstream.ts';

/** Issue 15: info logging costs at most this share of the throughput. */
export const LOG_COST_TARGET = 0.05;
export const LEVELS = ['info', 'warn'] as const;
export type Level = (typeof LEVELS)[number];
const CONNECTIONS = 16;

export interface LevelCell {
  level: Level;
  stats: CellStats;
  gatewayCpuMs: number;
}

export interface LogCost {
  /** 1 − info req/s ÷ warn req/s: the throughput info logging takes. */
  throughputShare: number;
  /** 1 − warn CPU ÷ info CPU per request: the same from CPU time, steadier on a busy machine. */
  cpuShare: number;
}

export function logCost(cells: readonly LevelCell[]): LogCost {
  const info = cells.find((c) => c.level === 'info');
  const warn = cells.find((c) => c.level === 'warn');
  if (!info || !warn) return { throughputShare: NaN, cpuShare: NaN };
  return {
    throughputShare: 1 - info.stats.rps / warn.stats.rps,
    cpuShare: 1 - warn.gatewayCpuMs / info.gatewayCpuMs,
  };
}

/** Info, warn, then warn, info, ...: each level is as often first as second. */
export function levelOrder(round: number): Level[] {
  return round % 2 === 0 ? ['info', 'warn'] : ['warn', 'info'];
}

export function logCostChecks(cost: LogCost): Check[] {
  return [
    atMost(
      {
        name: 'info logging cost @16 conns (share of throughput)',
        value: cost.throughputShare * 100,
        unit: ' %',
        digits: 1,
      },
      LOG_COST_TARGET * 100,
    ),
  ];
}

const pct = (v: number): string => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : '-');

export function logCostTables(cells: readonly LevelCell[], cost: LogCost): Table[] {
  return [
    {
      title: `Info vs warn logging: two Gantry processes, alternating windows, ${CONNECTIONS} connections, non-streaming`,
      columns: ['level', 'req/s', 'p50', 'p99', 'requests', 'errors', 'gw CPU/req'],
      rows: cells.map((c) => [
        c.level,
        c.stats.rps.toFixed(0),
        c.stats.p50.toFixed(3),
        c.stats.p99.toFixed(3),
        String(c.stats.requests),
        String(c.stats.errors),
        c.gatewayCpuMs.toFixed(3),
      ]),
    },
    {
      title: 'Cost of info logging (share of what warn gives)',
      columns: ['by req/s', 'by CPU per request'],
      rows: [[pct(cost.throughputShare), pct(cost.cpuShare)]],
    },
  ];
}

const exchangeOf = (t: Target): Exchange => ({
  origin: t.origin,
  path: t.path,
  headers: t.headers,
  body: chatBody(false),
  stream: false,
});

async function run(ctx: BenchContext): Promise<SectionResult> {
  const seconds = sectionNumber(process.env, 'BENCH_LOG_SECONDS', 6, 'seconds');
  const rounds = sectionNumber(process.env, 'BENCH_LOG_ROUNDS', 4, 'count');
  const upstream = await startUpstream(ctx);
  const targets: Partial<Record<Level, Target>> = {};
  try {
    for (const level of LEVELS) {
      targets[level] = await startGantry(ctx, upstream.url, {
        env: { GANTRY_LOG_LEVEL: level },
      });
      ctx.log(`${level}: ${targets[level].label} (pid ${targets[level].child?.pid ?? '-'})`);
      if (ctx.options.primeSeconds > 0)
        await runLoad(exchangeOf(targets[level]), {
          connections: CONNECTIONS,
          warmupMs: 0,
          durationMs: ctx.options.primeSeconds * 1000,
        });
    }
    const parts: Record<Level, Samples[]> = { info: [], warn: [] };
    const cpu: Record<Level, number> = { info: 0, warn: 0 };
    const windowMs = (seconds * 1000) / rounds;
    for (let round = 0; round < rounds; round++) {
      for (const level of levelOrder(round)) {
        const target = targets[level]!;
        await upstream.reset();
        const meter = cpuMeter([target.child]);
        parts[level].push(
          await runLoad(
            exchangeOf(target),
            { connections: CONNECTIONS, warmupMs: 250, durationMs: windowMs },
            meter,
          ),
        );
        cpu[level] += meter.used()[0] ?? NaN;
      }
    }
    const cells = LEVELS.map((level): LevelCell => {
      const stats = summarise(mergeSamples(parts[level]));
      return { level, stats, gatewayCpuMs: cpu[level] / stats.requests };
    });
    for (const c of cells)
      ctx.log(
        `  ${c.level.padEnd(5)} ${c.stats.rps.toFixed(0).padStart(6)} req/s  p50 ${c.stats.p50.toFixed(3)}  CPU ${c.gatewayCpuMs.toFixed(3)} ms/req`,
      );
    const cost = logCost(cells);
    return {
      tables: logCostTables(cells, cost),
      checks: logCostChecks(cost),
      notes: [`${seconds}s per level in ${rounds} alternating windows (0.25s warm-up each)`],
      data: { cells, cost },
    };
  } finally {
    for (const t of Object.values(targets)) await t?.stop();
    await upstream.child.stop();
  }
}

export const logCostSection: Section = {
  name: 'log-cost',
  title: 'Logging: info (one line per request) vs warn, same config',
  run,
};
