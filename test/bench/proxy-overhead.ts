/**
 * Section "proxy-overhead": the same small chat completion, non-streaming and streaming,
 * at 1 and 16 connections, sent to the fake upstream directly, through Gantry, through the
 * floor (a minimal Node proxy doing no work: what any Node proxy adds on this machine), through
 * nginx as a do-nothing reverse proxy (what any proxy adds, Node or not) and
 * through the peer gateway when it can be installed. What a gateway adds is its figure minus
 * the direct one; memory is the gateway process's RSS after its runs.
 */
import { atLeast, atMost, skipped } from './checks.ts';
import { runLoad, type Exchange, type Meter } from './load.ts';
import { installPeer, startPeer } from './peer.ts';
import { readCpuMs, readMemory, type Child, type Memory } from './procs.ts';
import { ms, STATS_COLUMNS, statsCells } from './report.ts';
import type { BenchContext, Check, Section, SectionResult, Table } from './section.ts';
import { startFloor } from './floor.ts';
import { startGantry } from './gantry.ts';
import { installNginx, startNginxFloor } from './nginx-floor.ts';
import { summarise, type CellStats } from './stats.ts';
import { chatBody, type Target } from './target.ts';
import { startUpstream, type Upstream } from './upstream.ts';

export const CONNECTIONS = [1, 16] as const;
export const MODES = ['json', 'stream'] as const;
export type Mode = (typeof MODES)[number];

/** Targets from issue 15 (issue 2's, with the added p50 tightened and CPU per request added). */
export const TARGETS = {
  addedP50Ms: 0.3,
  peerThroughputRatio: 5,
  addedTtfbMs: 1,
  rssMb: 150,
  /** Gantry CPU time per request at 16 connections, non-streaming: 4,000 req/s on one core. */
  cpuPerRequestMs: 0.25,
};

export interface Cell {
  connections: number;
  mode: Mode;
  stats: CellStats;
  /**
   * CPU time per successful request during the measured window (ms), of the gateway process
   * (NaN for direct) and of the fake upstream. Unlike latency it hardly moves when other
   * work competes for the cores, and 1000 / gatewayCpuMs is the gateway's req/s per core.
   */
  gatewayCpuMs: number;
  upstreamCpuMs: number;
}

export interface TargetRun {
  name: string;
  label: string;
  cells: Cell[];
  /**
   * Memory once ready, before any load; right after its last cell (what the check reads);
   * and after it idled `settledAfterS` seconds more (V8 may shrink the heap once idle).
   */
  memoryAtStart?: Memory;
  memory?: Memory;
  memorySettled?: Memory;
  settledAfterS?: number;
  /** Seconds from the process start to its first measured window (for profile --skip). */
  firstWindowAfterS?: number;
}

export interface Added {
  gateway: string;
  connections: number;
  mode: Mode;
  p50: number;
  p99: number;
  ttfbP50: number;
  ttfbP99: number;
  /** Gateway throughput as a share of the direct throughput. */
  rpsShare: number;
}

const cellOf = (run: TargetRun | undefined, connections: number, mode: Mode): CellStats | undefined =>
  run?.cells.find((c) => c.connections === connections && c.mode === mode)?.stats;

/** Each gateway's figures minus the direct ones, cell by cell. */
export function addedLatency(direct: TargetRun, gateways: TargetRun[]): Added[] {
  const out: Added[] = [];
  for (const g of gateways) {
    for (const cell of g.cells) {
      const base = cellOf(direct, cell.connections, cell.mode);
      if (!base) continue;
      out.push({
        gateway: g.name,
        connections: cell.connections,
        mode: cell.mode,
        p50: cell.stats.p50 - base.p50,
        p99: cell.stats.p99 - base.p99,
        ttfbP50: cell.stats.ttfbP50 - base.ttfbP50,
        ttfbP99: cell.stats.ttfbP99 - base.ttfbP99,
        rpsShare: cell.stats.rps / base.rps,
      });
    }
  }
  return out;
}

/** Gantry requests/s over the peer's, per mode, at the highest concurrency. */
export function throughputRatio(
  gantry: TargetRun | undefined,
  peer: TargetRun | undefined,
  mode: Mode,
): number {
  const top = CONNECTIONS[CONNECTIONS.length - 1]!;
  const g = cellOf(gantry, top, mode);
  const p = cellOf(peer, top, mode);
  return g && p && p.rps > 0 ? g.rps / p.rps : Number.NaN;
}

export function proxyChecks(runs: TargetRun[], added: Added[], peerMissing: string | undefined): Check[] {
  const gantry = runs.find((r) => r.name === 'gantry');
  const peer = runs.find((r) => r.name === 'peer');
  const find = (connections: number, mode: Mode): Added | undefined =>
    added.find((a) => a.gateway === 'gantry' && a.connections === connections && a.mode === mode);
  const top = CONNECTIONS[CONNECTIONS.length - 1]!;
  const ratio = (mode: Mode): Check => {
    const name = `Gantry/peer throughput @${top} conns (${mode})`;
    if (peerMissing)
      return skipped(name, `>= ${TARGETS.peerThroughputRatio.toFixed(2)}x`, 'peer not measured (see note)');
    return atLeast(
      { name, value: throughputRatio(gantry, peer, mode), unit: 'x' },
      TARGETS.peerThroughputRatio,
    );
  };
  const top16 = gantry?.cells.find((c) => c.connections === top && c.mode === 'json');
  return [
    atMost(
      {
        name: `Gantry CPU per request @${top} conns (non-streaming)`,
        value: top16?.gatewayCpuMs ?? NaN,
        unit: ' ms',
        digits: 3,
      },
      TARGETS.cpuPerRequestMs,
    ),
    atMost(
      {
        name: 'added p50 @1 conn (non-streaming)',
        value: find(1, 'json')?.p50 ?? NaN,
        unit: ' ms',
        digits: 3,
      },
      TARGETS.addedP50Ms,
    ),
    ratio('json'),
    ratio('stream'),
    atMost(
      {
        name: 'added streaming TTFB p50 @1 conn',
        value: find(1, 'stream')?.ttfbP50 ?? NaN,
        unit: ' ms',
        digits: 3,
      },
      TARGETS.addedTtfbMs,
    ),
    atMost(
      { name: 'Gantry RSS after the runs', value: gantry?.memory?.rssMb ?? NaN, unit: ' MB', digits: 1 },
      TARGETS.rssMb,
    ),
  ];
}

const signedMs = (v: number): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(3)}` : '-');

/** A target's added latency and its cell at 1 connection, non-streaming. */
const atOneConn = (runs: TargetRun[], added: Added[], name: string) => ({
  added: added.find((a) => a.gateway === name && a.connections === 1 && a.mode === 'json'),
  cpu: runs.find((r) => r.name === name)?.cells.find((c) => c.connections === 1 && c.mode === 'json'),
});

/** Gantry's added p50 and CPU per request at 1 connection beside the floor's (non-streaming). */
export function aboveFloor(runs: TargetRun[], added: Added[]): string | undefined {
  const at = (name: string) => atOneConn(runs, added, name);
  const [gantry, floor] = [at('gantry'), at('floor')];
  if (!gantry.added || !floor.added || !gantry.cpu || !floor.cpu) return undefined;
  return (
    `above the floor @1 conn (non-streaming): Gantry adds ${signedMs(gantry.added.p50)} ms p50 ` +
    `where the floor adds ${signedMs(floor.added.p50)} ms (Gantry ${signedMs(gantry.added.p50 - floor.added.p50)} ms over it); ` +
    `CPU per request ${ms(gantry.cpu.gatewayCpuMs)} vs ${ms(floor.cpu.gatewayCpuMs)} ms`
  );
}

/**
 * The nginx floor at 1 connection (non-streaming): what a proxy that is not Node adds on this
 * machine, and the Node floor's and Gantry's added p50 over it.
 */
export function nginxFloorNote(runs: TargetRun[], added: Added[]): string | undefined {
  const nginx = atOneConn(runs, added, 'nginx');
  if (!nginx.added || !nginx.cpu) return undefined;
  const over = (name: string, label: string): string => {
    const other = atOneConn(runs, added, name).added;
    return other ? `; ${label} ${signedMs(other.p50 - nginx.added!.p50)} ms over it` : '';
  };
  return (
    `nginx floor @1 conn (non-streaming), what any proxy adds here: ${signedMs(nginx.added.p50)} ms p50, ` +
    `CPU per request ${ms(nginx.cpu.gatewayCpuMs)} ms${over('floor', 'Node floor')}${over('gantry', 'Gantry')}`
  );
}

/** Measures the CPU time `children` use during the measured window. */
export function cpuMeter(children: Array<Child | undefined>): Meter & { used(): number[] } {
  let before: Array<number | undefined> = [];
  let after: Array<number | undefined> = [];
  const read = (): Promise<Array<number | undefined>> =>
    Promise.all(children.map((c) => (c ? readCpuMs(c.pid) : undefined)));
  return {
    start: async () => void (before = await read()),
    stop: async () => void (after = await read()),
    used: () => children.map((_, i) => (after[i] ?? NaN) - (before[i] ?? NaN)),
  };
}

export function tables(runs: TargetRun[], added: Added[]): Table[] {
  const cells: Table = {
    title: 'Proxy overhead: measured cells (latency in ms, TTFB = first body chunk)',
    columns: ['target', 'conns', 'mode', ...STATS_COLUMNS, 'gw CPU/req', 'upstream CPU/req'],
    rows: runs.flatMap((r) =>
      r.cells.map((c) => [
        r.name,
        String(c.connections),
        c.mode,
        ...statsCells(c.stats),
        ms(c.gatewayCpuMs),
        ms(c.upstreamCpuMs),
      ]),
    ),
  };
  const overhead: Table = {
    title: 'Added by each gateway over calling the upstream directly (ms; req/s as % of direct)',
    columns: ['gateway', 'conns', 'mode', '+p50', '+p99', '+TTFB p50', '+TTFB p99', 'req/s vs direct'],
    rows: added.map((a) => [
      a.gateway,
      String(a.connections),
      a.mode,
      signedMs(a.p50),
      signedMs(a.p99),
      signedMs(a.ttfbP50),
      signedMs(a.ttfbP99),
      Number.isFinite(a.rpsShare) ? `${(a.rpsShare * 100).toFixed(0)}%` : '-',
    ]),
  };
  const peer = runs.find((r) => r.name === 'peer');
  const capacity = (cpuMs: number): number => 1000 / cpuMs;
  const cpu: Table = {
    title: 'Gateway CPU per request (ms) and the req/s one core would give at that cost (contention-proof)',
    columns: ['gateway', 'conns', 'mode', 'CPU ms/req', 'req/s per core', 'vs peer'],
    rows: runs
      .filter((r) => r.name !== 'direct')
      .flatMap((r) =>
        r.cells.map((c) => {
          const peerCell = peer?.cells.find((p) => p.connections === c.connections && p.mode === c.mode);
          const ratio = peerCell ? capacity(c.gatewayCpuMs) / capacity(peerCell.gatewayCpuMs) : NaN;
          return [
            r.name,
            String(c.connections),
            c.mode,
            ms(c.gatewayCpuMs),
            Number.isFinite(c.gatewayCpuMs) ? capacity(c.gatewayCpuMs).toFixed(0) : '-',
            Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : '-',
          ];
        }),
      ),
  };
  const memory: Table = {
    title:
      'Gateway memory (/proc/<pid>/status VmRSS): once ready, right after its last cell (the check), and after idling',
    columns: ['gateway', 'label', 'RSS idle MB', 'RSS after MB', 'RSS after idling MB', 'peak (VmHWM) MB'],
    rows: runs
      .filter((r) => r.name !== 'direct')
      .map((r) => [
        r.name,
        r.label,
        r.memoryAtStart?.rssMb.toFixed(1) ?? '-',
        r.memory?.rssMb.toFixed(1) ?? '-',
        r.memorySettled ? `${r.memorySettled.rssMb.toFixed(1)} (+${r.settledAfterS ?? 0} s)` : '-',
        r.memory?.peakMb.toFixed(1) ?? '-',
      ]),
  };
  return [cells, overhead, cpu, memory];
}

async function measure(ctx: BenchContext, upstream: Upstream, target: Target): Promise<TargetRun> {
  const cells: Cell[] = [];
  const memoryAtStart = target.child ? await readMemory(target.child.pid) : undefined;
  const exchange = (mode: Mode): Exchange => ({
    origin: target.origin,
    path: target.path,
    headers: target.headers,
    body: chatBody(mode === 'stream'),
    stream: mode === 'stream',
  });
  if (ctx.options.primeSeconds > 0) {
    const top = CONNECTIONS[CONNECTIONS.length - 1]!;
    for (const mode of MODES) {
      const primed = await runLoad(exchange(mode), {
        connections: top,
        warmupMs: 0,
        durationMs: ctx.options.primeSeconds * 1000,
      });
      if (primed.errors > 0 && primed.latencyMs.length === 0)
        throw new Error(`${target.name} fails every request: ${primed.firstError}`);
    }
    await upstream.reset();
  }
  let firstWindowMs: number | undefined;
  const wanted = (connections: number, mode: Mode): boolean =>
    ctx.options.cells.length === 0 || ctx.options.cells.includes(`${connections}/${mode}`);
  for (const connections of CONNECTIONS) {
    for (const mode of MODES) {
      if (!wanted(connections, mode)) continue;
      await upstream.reset();
      const meter = cpuMeter([target.child, upstream.child]);
      const samples = await runLoad(
        exchange(mode),
        { connections, warmupMs: ctx.options.warmupSeconds * 1000, durationMs: ctx.options.seconds * 1000 },
        {
          start: async () => {
            firstWindowMs ??= Date.now();
            await meter.start();
          },
          stop: meter.stop,
        },
      );
      const stats = summarise(samples);
      const [gatewayCpu, upstreamCpu] = meter.used().map((used) => used / stats.requests);
      cells.push({
        connections,
        mode,
        stats,
        gatewayCpuMs: gatewayCpu ?? NaN,
        upstreamCpuMs: upstreamCpu ?? NaN,
      });
      for (const child of [target.child, upstream.child]) {
        if (child && !child.running())
          throw new Error(`${child.name} died during the ${target.name} run:\n${child.outputTail()}`);
      }
      const ttfb = mode === 'stream' ? `  TTFB p50 ${ms(stats.ttfbP50)}` : '';
      const cpu = target.child ? `  CPU ${ms(gatewayCpu ?? NaN)} ms/req` : '';
      const errors = stats.errors ? `  ERRORS ${stats.errors} (first: ${stats.firstError})` : '';
      ctx.log(
        `  ${target.name.padEnd(6)} ${String(connections).padStart(2)} conn ${mode.padEnd(6)} ${stats.rps.toFixed(0).padStart(6)} req/s  p50 ${ms(stats.p50)}  p99 ${ms(stats.p99)}${ttfb}${cpu}${errors}`,
      );
    }
  }
  const memory = target.child ? await readMemory(target.child.pid) : undefined;
  // A second reading after an idle spell, reported beside the first; the check keeps the first.
  const settle = ctx.options.settleSeconds;
  let memorySettled: Memory | undefined;
  if (target.child && memory && settle > 0) {
    await new Promise((resolve) => setTimeout(resolve, settle * 1000));
    memorySettled = await readMemory(target.child.pid);
  }
  const after =
    target.startedAtMs !== undefined && firstWindowMs !== undefined
      ? (firstWindowMs - target.startedAtMs) / 1000
      : undefined;
  return {
    name: target.name,
    label: target.label,
    cells,
    ...(memoryAtStart && { memoryAtStart }),
    ...(memory && { memory }),
    ...(memorySettled && { memorySettled, settledAfterS: settle }),
    ...(after !== undefined && { firstWindowAfterS: after }),
  };
}

/** Starts a gateway, measures it, and always stops it before the next one starts. */
async function measureGateway(
  ctx: BenchContext,
  upstream: Upstream,
  start: () => Promise<Target>,
): Promise<TargetRun> {
  const target = await start();
  try {
    ctx.log(`${target.name}: ${target.label} at ${target.origin} (pid ${target.child?.pid ?? '-'})`);
    return await measure(ctx, upstream, target);
  } finally {
    await target.stop();
  }
}

async function run(ctx: BenchContext): Promise<SectionResult> {
  const notes: string[] = [];
  const peerInstall = ctx.options.peer
    ? await installPeer(ctx)
    : ({ ok: false, reason: 'disabled with BENCH_PEER=0' } as const);
  if (!peerInstall.ok) ctx.log(`peer: not measured (${peerInstall.reason})`);
  const nginxInstall = ctx.options.floors.includes('nginx') ? installNginx() : undefined;
  let nginxMissing = nginxInstall && !nginxInstall.ok ? nginxInstall.reason : undefined;
  if (nginxMissing) ctx.log(`nginx floor: skipped because ${nginxMissing}`);

  const upstream = await startUpstream(ctx);
  const runs: TargetRun[] = [];
  let peerMissing = peerInstall.ok ? undefined : peerInstall.reason;
  try {
    ctx.log(`direct: fake upstream at ${upstream.url} (pid ${upstream.child.pid})`);
    runs.push(await measure(ctx, upstream, upstream.direct));
    let profileDir: string | undefined;
    runs.push(
      await measureGateway(ctx, upstream, async () => {
        const g = await startGantry(ctx, upstream.url);
        profileDir = g.profileDir;
        return g;
      }),
    );
    if (profileDir) {
      const skip = Math.floor(runs.find((r) => r.name === 'gantry')?.firstWindowAfterS ?? 0);
      notes.push(
        `Gantry CPU profile in ${profileDir}: npx tsx test/bench/cpuprofile.ts <file> --skip=${skip}`,
      );
    }
    if (ctx.options.floors.includes('node'))
      runs.push(await measureGateway(ctx, upstream, () => startFloor(ctx, upstream.url)));
    if (nginxInstall?.ok) {
      const { bin } = nginxInstall;
      try {
        runs.push(await measureGateway(ctx, upstream, () => startNginxFloor(ctx, bin, upstream.url)));
      } catch (err) {
        nginxMissing = `nginx floor failed: ${(err as Error).message.split('\n')[0]}`;
        ctx.log(nginxMissing);
      }
    }
    if (peerInstall.ok) {
      try {
        runs.push(await measureGateway(ctx, upstream, () => startPeer(ctx, peerInstall, upstream.url)));
      } catch (err) {
        peerMissing = `peer failed: ${(err as Error).message.split('\n')[0]}`;
        ctx.log(peerMissing);
      }
    }
  } finally {
    await upstream.child.stop();
  }

  const direct = runs[0]!;
  const added = addedLatency(
    direct,
    runs.filter((r) => r.name !== 'direct'),
  );
  for (const r of runs) {
    for (const c of r.cells) {
      if (c.stats.errors > 0)
        notes.push(
          `${r.name} ${c.connections} conn ${c.mode}: ${c.stats.errors} errors, first: ${c.stats.firstError}`,
        );
    }
  }
  if (peerMissing) notes.push(`peer not measured: ${peerMissing}`);
  if (nginxMissing) notes.push(`nginx floor skipped because ${nginxMissing}`);
  const floorNote = aboveFloor(runs, added);
  if (floorNote) notes.push(floorNote);
  const nginxNote = nginxFloorNote(runs, added);
  if (nginxNote) notes.push(nginxNote);
  const gantry = runs.find((r) => r.name === 'gantry');
  const peer = runs.find((r) => r.name === 'peer');
  const cpuRatio = (mode: Mode): string => {
    const top = CONNECTIONS[CONNECTIONS.length - 1]!;
    const g = gantry?.cells.find((c) => c.connections === top && c.mode === mode)?.gatewayCpuMs;
    const p = peer?.cells.find((c) => c.connections === top && c.mode === mode)?.gatewayCpuMs;
    return g !== undefined && p !== undefined && Number.isFinite(p / g) ? `${(p / g).toFixed(2)}x` : 'n/a';
  };
  if (peer) {
    notes.push(
      `throughput by CPU cost instead of req/s (does not depend on what else the machine runs): Gantry/peer ${cpuRatio('json')} non-streaming, ${cpuRatio('stream')} streaming`,
    );
  }
  return {
    tables: tables(runs, added),
    checks: proxyChecks(runs, added, peerMissing),
    notes,
    data: {
      runs,
      added,
      throughputRatio16: {
        json: throughputRatio(gantry, peer, 'json'),
        stream: throughputRatio(gantry, peer, 'stream'),
      },
      peer: peerInstall.ok
        ? { version: peerInstall.version, measured: !peerMissing }
        : { measured: false, reason: peerMissing },
      gantryLogLevel: ctx.options.gantryLogLevel,
    },
  };
}

export const proxyOverhead: Section = {
  name: 'proxy-overhead',
  title: 'Proxy overhead: direct vs Gantry vs peer, same fake upstream',
  run,
};
