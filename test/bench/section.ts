/**
 * The contract between the bench runner and its sections. A section measures one thing
 * (proxy overhead today; guardrail-scan or cache-lookup timing later), using the shared
 * context, and returns tables, target checks and raw figures; the runner prints and saves
 * them. Adding a section = one module exporting a `Section` plus one line in bench.ts.
 */
import type { BenchOptions } from './options.ts';
import type { CpuPlan } from './pinning.ts';
import type { ProcessGroup } from './procs.ts';

export interface BenchContext {
  repoRoot: string;
  /** `.bench/` under the repo root: gitignored scratch space (peer installs, profiles). */
  scratchDir: string;
  options: BenchOptions;
  cpus: CpuPlan;
  /** Start children here so the runner stops them whatever happens. */
  processes: ProcessGroup;
  log(line: string): void;
}

export interface Table {
  title: string;
  columns: string[];
  rows: string[][];
}

export type Verdict = 'PASS' | 'MISS' | 'SKIP';

export interface Check {
  name: string;
  /** The target as a readable condition, e.g. "< 0.5 ms". */
  target: string;
  /** The measured value, formatted, or why it was not measured. */
  actual: string;
  verdict: Verdict;
}

export interface SectionResult {
  tables: Table[];
  checks: Check[];
  notes: string[];
  /** Raw figures for `.bench/last.json` and the JSON summary line. */
  data: Record<string, unknown>;
}

export interface Section {
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<SectionResult>;
}
