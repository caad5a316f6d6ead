import { describe, expect, it } from 'vitest';
import { GuardrailNames, resolvePolicy } from '../../dataplane/src/pipeline/guardrails/index.ts';
import { ALL_ON, readScanSettings } from './guardrail-scan.ts';
import { readRoutingSettings } from './routing-classifier.ts';

describe('in-process sections settings', () => {
  it('scans with every detector on', () => {
    const policy = resolvePolicy(ALL_ON);
    expect(GuardrailNames.filter((n) => policy.checks[n].action === 'off')).toEqual([]);
  });

  it('reads iteration counts from the environment', () => {
    expect(readScanSettings({})).toEqual({ iterations: 200, warmup: 50 });
    expect(readScanSettings({ BENCH_SCAN_ITERATIONS: '20' }).iterations).toBe(20);
    expect(readRoutingSettings({ BENCH_ROUTING_ROUNDS: '2' })).toEqual({
      rounds: 2,
      iterations: 500,
      warmup: 50,
    });
  });
});
