import { describe, expect, it } from 'vitest';
import { abOrder, abTables, type AbCell } from './money-ab.ts';

const cell = (checkout: AbCell['checkout'], key: AbCell['key'], p50: number, redisUs: number): AbCell => ({
  checkout,
  key,
  p50,
  p99: p50 * 3,
  requests: 100,
  errors: 0,
  cpuMs: p50 / 2,
  redisUs,
  scripts: key === 'metered' ? 2 : 1,
});

describe('money A/B figures', () => {
  it('runs every checkout and key once per round, each as often early as late', () => {
    const [even, odd] = [abOrder(0), abOrder(1)];
    expect(even).toHaveLength(4);
    expect(new Set(even.map(([c, k]) => `${c}:${k}`)).size).toBe(4);
    expect(odd).toEqual([...even].reverse());
    // Summed over a pair of rounds, every window sits at the same mean position.
    const position = (c: string, k: string) =>
      even.findIndex(([x, y]) => x === c && y === k) + odd.findIndex(([x, y]) => x === c && y === k);
    for (const [c, k] of even) expect(position(c, k)).toBe(3);
  });

  it('reports metered minus plain per checkout', () => {
    const cells = [
      cell('baseline', 'plain', 1.0, 50),
      cell('baseline', 'metered', 1.3, 150),
      cell('this', 'plain', 1.0, 50),
      cell('this', 'metered', 1.2, 120),
    ];
    const [, added] = abTables(cells);
    expect(added!.rows).toEqual([
      ['baseline', '0.300', '0.150', '100.0'],
      ['this', '0.200', '0.100', '70.0'],
    ]);
  });
});
