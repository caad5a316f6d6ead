/** Plain-text rendering of tables and target checks. */
import type { Check, Table } from './section.ts';

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
