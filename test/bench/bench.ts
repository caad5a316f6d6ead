/**
 * `npm run bench`: runs each bench section, prints its tables and target checks, one JSON
 * summary line (prefixed `BENCH_JSON `), and writes everything to .bench/last.json.
 * Settings come from the environment (see options.ts): BENCH_SECONDS, BENCH_WARMUP_SECONDS,
 * BENCH_PRIME_SECONDS, BENCH_PEER=0, BENCH_PEER_VERSION, BENCH_GANTRY_LOG_LEVEL,
 * BENCH_GANTRY_DIR, BENCH_CPU_PROF=1, BENCH_CELLS, BENCH_SECTIONS; sections read their own
 * (BENCH_MONEY_*, BENCH_SCAN_*, BENCH_ROUTING_*, BENCH_CACHE_*, BENCH_CACHEE2E_*, see
 * README.md).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readOptions } from './options.ts';
import { pinCpus } from './pinning.ts';
import { ProcessGroup } from './procs.ts';
import { cacheE2e } from './cache-e2e.ts';
import { cacheLookup } from './cache-lookup.ts';
import { compressionDecision } from './compression-decision.ts';
import { guardrailScan } from './guardrail-scan.ts';
import { logCostSection } from './log-cost.ts';
import { moneyAb } from './money-ab.ts';
import { moneyPath } from './money-path.ts';
import { proxyOverhead } from './proxy-overhead.ts';
import { routingClassifier } from './routing-classifier.ts';
import { renderChecks, renderTable } from './report.ts';
import type { BenchContext, Check, Section, SectionResult } from './section.ts';

/** Every section the bench knows, in run order. Later sections add one line here. */
const sections: Section[] = [
  proxyOverhead,
  logCostSection,
  moneyPath,
  moneyAb,
  guardrailScan,
  routingClassifier,
  cacheLookup,
  cacheE2e,
  compressionDecision,
];

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

interface SectionOutcome {
  name: string;
  title: string;
  result?: SectionResult;
  error?: string;
}

async function runSection(ctx: BenchContext, section: Section): Promise<SectionOutcome> {
  ctx.log(`\n== ${section.title}`);
  try {
    return { name: section.name, title: section.title, result: await section.run(ctx) };
  } catch (err) {
    const error = (err as Error).stack ?? String(err);
    ctx.log(`section ${section.name} failed: ${error}`);
    return { name: section.name, title: section.title, error };
  }
}

function print(outcome: SectionOutcome): void {
  console.log(`\n=== ${outcome.title}`);
  if (!outcome.result) {
    console.log(`FAILED: ${outcome.error}`);
    return;
  }
  for (const t of outcome.result.tables) console.log(`\n${renderTable(t)}`);
  if (outcome.result.checks.length) console.log(`\n${renderChecks(outcome.result.checks)}`);
  for (const n of outcome.result.notes) console.log(`note: ${n}`);
}

async function main(): Promise<number> {
  const options = readOptions(process.env);
  const cpuPlan = pinCpus();
  const processes = new ProcessGroup();
  const scratchDir = join(repoRoot, '.bench');
  await mkdir(scratchDir, { recursive: true });
  const stopNow = (signal: NodeJS.Signals): void => {
    processes.killAllNow();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', stopNow);
  process.once('SIGTERM', stopNow);
  process.once('exit', () => processes.killAllNow());

  const ctx: BenchContext = {
    repoRoot,
    scratchDir,
    options,
    cpus: cpuPlan,
    processes,
    log: (l) => console.log(l),
  };
  const chosen = options.sections.length
    ? sections.filter((s) => options.sections.includes(s.name))
    : sections;
  const environment = {
    startedAt: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    pinning: cpuPlan,
    seconds: options.seconds,
    warmupSeconds: options.warmupSeconds,
    primeSeconds: options.primeSeconds,
    loadAverageAtStart: loadavg()[0],
  };
  console.log(
    `Gantry bench: ${options.seconds}s per cell after ${options.warmupSeconds}s warm-up (each target first primed ${options.primeSeconds}s per mode); node ${process.version}`,
  );
  console.log(`CPU: ${environment.cpu} x${environment.cores}; ${cpuPlan.description}`);

  const outcomes: SectionOutcome[] = [];
  for (const section of chosen) outcomes.push(await runSection(ctx, section));

  for (const o of outcomes) print(o);
  // Other work on the machine competes with the pinned processes: say so next to the figures.
  const busy = Math.max(environment.loadAverageAtStart ?? 0, loadavg()[0] ?? 0);
  if (busy > environment.cores) {
    console.log(
      `\nwarning: 1-minute load average reached ${busy.toFixed(1)} on ${environment.cores} cores; other work was competing, figures are noisy`,
    );
  }
  const checks: Check[] = outcomes.flatMap((o) => o.result?.checks ?? []);
  const summary = {
    environment,
    checks: Object.fromEntries(
      checks.map((c) => [c.name, { verdict: c.verdict, target: c.target, measured: c.actual }]),
    ),
    sections: Object.fromEntries(
      outcomes.map((o) => [o.name, o.result ? o.result.data : { error: o.error }]),
    ),
  };
  const file = join(scratchDir, 'last.json');
  await writeFile(file, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`\nBENCH_JSON ${JSON.stringify(summary)}`);
  console.log(`(full results in ${file})`);
  return outcomes.some((o) => o.error) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
