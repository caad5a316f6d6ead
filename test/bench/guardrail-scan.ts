/**
 * Section "guardrail-scan" (issue 4): how long `scanRequest` takes, in this process, on the
 * eval's ~20,000-token conversation (prose, code, logs; no attack in it) with all four
 * detectors on, and with each detector alone: first sight, every text new. Last row: the
 * next turn of that conversation as the stage scans it (tenant-scoped memo, memo.ts), where
 * only the new message is scanned. The policy is resolved once, as the stage does once per
 * tenant, so the figures are the scan itself. Each row gives wall time and the process's CPU
 * time per scan; the check is on wall p50.
 */
import type { GuardrailPolicySpec } from '@gantry/crds';
import { estimatePromptTokens } from '../../dataplane/src/accounting/tokens.ts';
import type { ChatRequest } from '../../dataplane/src/formats/openai/types.ts';
import {
  GuardrailNames,
  resolvePolicy,
  scanRequest,
  type GuardrailName,
  type RequestVerdict,
} from '../../dataplane/src/pipeline/guardrails/index.ts';
import { benchConversation, nextTurn } from '../eval/guardrails-eval.ts';
import { below } from './checks.ts';
import { HOSTILE_CHARS, measureHostile } from './guardrail-hostile.ts';
import { sectionNumber } from './options.ts';
import type { BenchContext, Section, SectionResult, Table } from './section.ts';
import { fmtMs, summariseTimes, type Timing, type TimingSpec } from './timing.ts';

/** Issue 4: all four detectors together on a 20,000-token conversation. */
export const SCAN_P50_TARGET_MS = 2;
/** Any one detector on any hostile shape (guardrail-hostile.ts), CPU ms per KB of text. */
export const HOSTILE_MS_PER_KB_TARGET = 1;

/** Every check on, with the action that does the most work when it fires (redact copies). */
export const ALL_ON: GuardrailPolicySpec = {
  promptInjection: { action: 'block' },
  toxicity: { action: 'flag' },
  pii: { action: 'redact' },
  secrets: { action: 'redact' },
};

export function readScanSettings(env: NodeJS.ProcessEnv): TimingSpec {
  return {
    iterations: sectionNumber(env, 'BENCH_SCAN_ITERATIONS', 200, 'count'),
    warmup: sectionNumber(env, 'BENCH_SCAN_WARMUP', 50, 'count'),
  };
}

export interface ScanRow {
  checks: 'all four' | 'all four, next turn' | GuardrailName;
  /** Wall time per scan. */
  timing: Timing;
  /** CPU time per scan (user + system of this process): what a busy machine inflates least. */
  cpu: Timing;
  action: string;
  findings: number;
}

/** The last scan's result, kept so that no scan can be dropped as unused. */
let sink: unknown;
export const lastScan = (): unknown => sink;

/**
 * timeSync (timing.ts) with the process's CPU time read around each call as well: on a
 * shared machine the wall figure moves with the load, the CPU figure much less.
 */
function timeScans(fn: () => unknown, spec: TimingSpec): { wall: Timing; cpu: Timing } {
  for (let i = 0; i < spec.warmup; i++) sink = fn();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < spec.iterations; i++) {
    const used = process.cpuUsage();
    const start = process.hrtime.bigint();
    sink = fn();
    const end = process.hrtime.bigint();
    const after = process.cpuUsage(used);
    wall.push(Number(end - start) / 1e6);
    cpu.push((after.user + after.system) / 1000);
  }
  return { wall: summariseTimes(wall), cpu: summariseTimes(cpu) };
}

const contentChars = (req: ChatRequest): number =>
  req.messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : 0), 0);

async function run(ctx: BenchContext): Promise<SectionResult> {
  const spec = readScanSettings(process.env);
  const req = benchConversation();
  const tokens = estimatePromptTokens(req);
  const chars = contentChars(req);
  const policy = resolvePolicy(ALL_ON);
  ctx.log(
    `conversation: ${req.messages.length} messages, ${chars} chars, ${tokens} tokens (o200k); ${spec.warmup} warm-up + ${spec.iterations} timed scans per row`,
  );
  const selections: Array<[ScanRow['checks'], ReadonlySet<GuardrailName> | undefined]> = [
    ['all four', undefined],
    ...GuardrailNames.map((n): [GuardrailName, ReadonlySet<GuardrailName>] => [n, new Set([n])]),
  ];
  const rows: ScanRow[] = [];
  for (const [checks, only] of selections) {
    let verdict: RequestVerdict | undefined;
    const { wall: timing, cpu } = timeScans(() => (verdict = scanRequest(req, policy, only)), spec);
    const findings = verdict?.findings.reduce((n, f) => n + f.count, 0) ?? 0;
    rows.push({ checks, timing, cpu, action: verdict?.action ?? '-', findings });
    ctx.log(
      `  ${checks.padEnd(16)} p50 ${fmtMs(timing.p50)} ms  p99 ${fmtMs(timing.p99)} ms  CPU p50 ${fmtMs(cpu.p50)} ms`,
    );
  }
  // The stage scans per tenant with a memo of recent texts' findings: on the next turn of
  // the same conversation only the new message is scanned. Each timed call is a new turn.
  {
    const scope = `bench-${process.pid}`;
    scanRequest(req, policy, undefined, scope);
    const turns = Array.from({ length: spec.warmup + spec.iterations }, (_, i) => nextTurn(req, i));
    let i = 0;
    let verdict: RequestVerdict | undefined;
    const { wall: timing, cpu } = timeScans(
      () => (verdict = scanRequest(turns[i++]!, policy, undefined, scope)),
      spec,
    );
    const findings = verdict?.findings.reduce((n, f) => n + f.count, 0) ?? 0;
    rows.push({ checks: 'all four, next turn', timing, cpu, action: verdict?.action ?? '-', findings });
    ctx.log(
      `  ${'all four, next turn'.padEnd(16)} p50 ${fmtMs(timing.p50)} ms  p99 ${fmtMs(timing.p99)} ms  CPU p50 ${fmtMs(cpu.p50)} ms`,
    );
  }
  const hostile = measureHostile(policy);
  let worst = { value: 0, where: '-' };
  for (const h of hostile)
    for (const name of GuardrailNames)
      if (h.msPerKb[name] > worst.value) worst = { value: h.msPerKb[name], where: `${name} on ${h.shape}` };
  ctx.log(`  hostile shapes: worst ${worst.value.toFixed(3)} ms/KB CPU (${worst.where})`);
  const hostileTable: Table = {
    title: `Hostile shapes: one ${HOSTILE_CHARS / 1024} KiB user message each, CPU ms per KB (lower of two scans, after a warm-up pass)`,
    columns: ['shape', ...GuardrailNames, 'all four', 'verdict'],
    rows: hostile.map((h) => [
      h.shape,
      ...GuardrailNames.map((n) => h.msPerKb[n].toFixed(3)),
      h.msPerKb.all.toFixed(3),
      h.action,
    ]),
  };
  const all = rows[0]!;
  const table: Table = {
    title: `scanRequest on a ${tokens}-token conversation (${req.messages.length} messages, ${chars} chars), in process (ms)`,
    columns: ['checks', 'p50', 'p99', 'mean', 'max', 'CPU p50', 'scans', 'verdict', 'findings'],
    rows: rows.map((r) => [
      r.checks,
      fmtMs(r.timing.p50),
      fmtMs(r.timing.p99),
      fmtMs(r.timing.mean),
      fmtMs(r.timing.max),
      fmtMs(r.cpu.p50),
      String(r.timing.iterations),
      r.action,
      String(r.findings),
    ]),
  };
  const notes: string[] = [`hostile shapes: the worst case is ${worst.where}`];
  if (all.action !== 'allow')
    notes.push(
      `the benign bench conversation got a "${all.action}" verdict (${all.findings} findings); the time includes acting on it`,
    );
  return {
    tables: [table, hostileTable],
    checks: [
      below(
        { name: 'guardrail scan p50, all four, 20k tokens', value: all.timing.p50, unit: ' ms', digits: 3 },
        SCAN_P50_TARGET_MS,
      ),
      below(
        {
          name: 'guardrail worst case, one detector, hostile text',
          value: worst.value,
          unit: ' ms/KB',
          digits: 3,
        },
        HOSTILE_MS_PER_KB_TARGET,
      ),
    ],
    notes,
    data: { messages: req.messages.length, chars, tokens, ...spec, rows, hostile },
  };
}

export const guardrailScan: Section = {
  name: 'guardrail-scan',
  title: 'Guardrail scan: all four detectors on a 20,000-token conversation (in process)',
  run,
};
