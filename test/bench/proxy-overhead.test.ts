import { describe, expect, it } from 'vitest';
import {
  aboveFloor,
  addedLatency,
  nginxFloorNote,
  proxyChecks,
  throughputRatio,
  type Mode,
  type TargetRun,
} from './proxy-overhead.ts';
import type { CellStats } from './stats.ts';

const stats = (rps: number, p50: number, ttfbP50 = NaN): CellStats => ({
  requests: 100,
  errors: 0,
  rps,
  p50,
  p99: p50 * 2,
  ttfbP50,
  ttfbP99: ttfbP50 * 2,
});

function run(name: string, rps16: number, p50: number, ttfb: number, rssMb?: number): TargetRun {
  const cells = ([1, 16] as const).flatMap((connections) =>
    (['json', 'stream'] as Mode[]).map((mode) => ({
      connections,
      mode,
      stats: stats(connections === 16 ? rps16 : 1000, p50, mode === 'stream' ? ttfb : NaN),
      gatewayCpuMs: 1000 / rps16,
      upstreamCpuMs: 0.1,
    })),
  );
  return { name, label: name, cells, ...(rssMb !== undefined && { memory: { rssMb, peakMb: rssMb } }) };
}

describe('proxy overhead figures', () => {
  const direct = run('direct', 8000, 0.4, 0.3);
  const gantry = run('gantry', 4000, 0.7, 0.9, 90);
  const gantryCheaper = run('gantry', 5000, 0.6, 0.9, 90);
  const peer = run('peer', 600, 2.8, 28);

  it('subtracts the direct figures cell by cell', () => {
    const added = addedLatency(direct, [gantry, peer]);
    const g = added.find((a) => a.gateway === 'gantry' && a.connections === 1 && a.mode === 'stream')!;
    expect(g.p50).toBeCloseTo(0.3);
    expect(g.ttfbP50).toBeCloseTo(0.6);
    expect(added.find((a) => a.gateway === 'peer' && a.connections === 16)!.rpsShare).toBeCloseTo(0.075);
    expect(throughputRatio(gantry, peer, 'json')).toBeCloseTo(6.667, 2);
  });

  it('marks each target PASS, MISS or SKIP', () => {
    const verdicts = (peerMissing?: string, runs = [direct, gantryCheaper, peer]) =>
      proxyChecks(runs, addedLatency(direct, runs.slice(1)), peerMissing).map((c) => c.verdict);
    // CPU per request, added p50, two throughput ratios, TTFB, RSS.
    expect(verdicts()).toEqual(['PASS', 'PASS', 'PASS', 'PASS', 'PASS', 'PASS']);
    expect(verdicts('offline', [direct, gantryCheaper])).toEqual([
      'PASS',
      'PASS',
      'SKIP',
      'SKIP',
      'PASS',
      'PASS',
    ]);
    // Limits are inclusive (the issue says "at most"): 0.25 ms of CPU and +0.3 ms p50 pass.
    expect(verdicts(undefined, [direct, gantry, peer]).slice(0, 2)).toEqual(['PASS', 'PASS']);
    const slow = run('gantry', 2000, 1.4, 2, 200);
    expect(verdicts(undefined, [direct, slow, peer])).toEqual([
      'MISS',
      'MISS',
      'MISS',
      'MISS',
      'MISS',
      'MISS',
    ]);
  });

  it('sets Gantry beside the floor at 1 connection, and says nothing without a floor run', () => {
    const floor = run('floor', 12000, 0.55, 0.45);
    const runs = [direct, gantry, floor];
    const note = aboveFloor(runs, addedLatency(direct, runs.slice(1)));
    // Gantry adds 0.3 ms, the floor 0.15 ms: Gantry is 0.15 ms over it.
    expect(note).toContain(
      'Gantry adds +0.300 ms p50 where the floor adds +0.150 ms (Gantry +0.150 ms over it)',
    );
    expect(note).toContain('CPU per request 0.250 vs 0.083 ms');
    expect(aboveFloor([direct, gantry], addedLatency(direct, [gantry]))).toBeUndefined();
  });

  it('sets the nginx floor beside the Node floor and Gantry, and says nothing without an nginx run', () => {
    const floor = run('floor', 12000, 0.55, 0.45);
    const nginx = run('nginx', 20000, 0.5, 0.4);
    const runs = [direct, gantry, floor, nginx];
    const note = nginxFloorNote(runs, addedLatency(direct, runs.slice(1)));
    // nginx adds 0.1 ms; the Node floor 0.15 (0.05 over nginx), Gantry 0.3 (0.2 over nginx).
    expect(note).toContain('what any proxy adds here: +0.100 ms p50, CPU per request 0.050 ms');
    expect(note).toContain('Node floor +0.050 ms over it; Gantry +0.200 ms over it');
    const alone = [direct, nginx];
    expect(nginxFloorNote(alone, addedLatency(direct, [nginx]))).not.toContain('Node floor');
    expect(nginxFloorNote([direct, gantry, floor], addedLatency(direct, [gantry, floor]))).toBeUndefined();
  });
});
