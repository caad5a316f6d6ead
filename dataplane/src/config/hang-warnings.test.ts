import { describe, expect, it } from 'vitest';
import { testDeployment } from '../router/testing.ts';
import type { Deployment, ModelRoute } from './snapshot.ts';
import { uncountedHangWarnings } from './hang-warnings.ts';

const snapshot = (deployments: Deployment[]) => {
  const route: ModelRoute = {
    model: 'm',
    deployments,
    fallbacks: [],
    capabilities: new Set(),
    ownedBy: 'openai',
  };
  return { models: new Map([['m', route]]) };
};

describe('uncountedHangWarnings', () => {
  const timed = (name: string, totalMs: number) =>
    testDeployment({
      name,
      timeouts: { totalMs, connectMs: 1_000, headersMs: totalMs, firstTokenMs: undefined, idleMs: 1_000 },
    });

  it('names each deployment whose timeoutMs is not below the request timeout, once, with both values', () => {
    const snap = snapshot([timed('quick', 60_000), timed('patient', 300_000), timed('equal', 120_000)]);
    const warnings = uncountedHangWarnings(snap, 120_000);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /ModelDeployment patient: timeoutMs 300000 .*120000 ms.*its hangs cannot count against it/,
    );
    expect(warnings[1]).toMatch(/ModelDeployment equal: timeoutMs 120000/);
    expect(uncountedHangWarnings(snap, 400_000)).toEqual([]);
  });
});
