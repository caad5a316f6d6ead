/** Plain-text rendering of tables and target checks. */
import type { Check, Table } from './section.ts';
import type { CellStats } from './stats.ts';

/** Milliseconds to three decimals; '-' for a figure that was not measured (NaN). */
export const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : '-');

/** Headers of a measured cell's figures, in the order statsCells() gives them. */
export const STATS_COLUMNS: readonly string[] = [
  'req/s',
  'p50',
  'p99',
  'TTFB p50',
  'TTFB p99',
  'requests',
  'errors',
];

/** A measured cell's figures as table cells (latencies in ms). */
export function statsCells(s: CellStats): string[] {
  return [
    s.rps.toFixed(0),
    ms(s.p50),
    ms(s.p99),
    ms(s.ttfbP50),
    ms(s.ttfbP99),
    String(s.requests),
    String(s.errors),
  ];
}

const isNumeric = (s: string): boolean => /^[+-]?\d/.test(s);

/** Columns padded to their widest cell; numbers right-aligned, text left-aligned. */
export function renderTable(t: Table): string {
  const widths = t.columns.map((c, i) => Math.max(c.length, ...t.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (isNumeric(c) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [t.title, line(t.columns), rule, ...t.rows.map(line)].join('\n');
}

export function renderChecks(checks: Check[]): string {
  return renderTable({
    title: 'Targets',
    columns: ['', 'check', 'target', 'measured'],
    rows: checks.map((c) => [c.verdict, c.name, c.target, c.actual]),
  });
}
