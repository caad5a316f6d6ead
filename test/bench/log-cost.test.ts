import { describe, expect, it } from 'vitest';
import { levelOrder, logCost, logCostChecks, type LevelCell } from './log-cost.ts';
import type { CellStats } from './stats.ts';

const stats = (rps: number): CellStats => ({
  requests: rps * 6,
  errors: 0,
  rps,
  p50: 4,
  p99: 9,
  ttfbP50: NaN,
  ttfbP99: NaN,
});
const cell = (level: LevelCell['level'], rps: number, cpu: number): LevelCell => ({
  level,
  stats: stats(rps),
  gatewayCpuMs: cpu,
});

describe('log cost figures', () => {
  it('is the share of throughput and of CPU that info takes over warn', () => {
    const cost = logCost([cell('info', 3820, 0.25), cell('warn', 4000, 0.24)]);
    expect(cost.throughputShare).toBeCloseTo(0.045);
    expect(cost.cpuShare).toBeCloseTo(0.04);
    expect(logCostChecks(cost)[0]).toMatchObject({ verdict: 'PASS', actual: '4.5 %', target: '<= 5.0 %' });
    expect(logCostChecks(logCost([cell('info', 3000, 0.3), cell('warn', 4000, 0.24)]))[0]!.verdict).toBe(
      'MISS',
    );
  });

  it('is not measured without both levels, and alternates which level goes first', () => {
    expect(logCostChecks(logCost([cell('info', 3800, 0.25)]))[0]).toMatchObject({
      verdict: 'MISS',
      actual: 'not measured',
    });
    expect([0, 1, 2, 3].map(levelOrder)).toEqual([
      ['info', 'warn'],
      ['warn', 'info'],
      ['info', 'warn'],
      ['warn', 'info'],
    ]);
  });
});
