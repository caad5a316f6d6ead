/** Target checks: pure comparisons of a measured figure against a limit. */
import type { Check } from './section.ts';

export interface Measured {
  name: string;
  /** NaN when the figure could not be measured (a cell with no successful request). */
  value: number;
  unit: string;
  digits?: number;
}

const show = (m: Measured, value: number): string => `${value.toFixed(m.digits ?? 2)}${m.unit}`;

function verdictOf(m: Measured, passes: (v: number) => boolean, target: string): Check {
  if (!Number.isFinite(m.value)) return { name: m.name, target, actual: 'not measured', verdict: 'MISS' };
  return { name: m.name, target, actual: show(m, m.value), verdict: passes(m.value) ? 'PASS' : 'MISS' };
}

export const below = (m: Measured, limit: number): Check =>
  verdictOf(m, (v) => v < limit, `< ${show(m, limit)}`);

export const atMost = (m: Measured, limit: number): Check =>
  verdictOf(m, (v) => v <= limit, `<= ${show(m, limit)}`);

export const atLeast = (m: Measured, limit: number): Check =>
  verdictOf(m, (v) => v >= limit, `>= ${show(m, limit)}`);

export const skipped = (name: string, target: string, why: string): Check => ({
  name,
  target,
  actual: why,
  verdict: 'SKIP',
});
