/**
 * Test support: complete `Deployment` values for router and pipeline tests. Each test names
 * only what it is about (name, priority, weight, capabilities …); the rest is a plain openai
 * chat deployment with short timeouts.
 */
import type { Capability } from '@gantry/crds';
import type { Deployment } from '../config/snapshot.ts';
import type { UpstreamTarget } from '../providers/types.ts';
import type { Claim, HealthRegistry } from './health.ts';

/** An upstream target; overrides replace single fields. */
export function testTarget(overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  return {
    provider: 'openai',
    baseUrl: 'http://u',
    upstreamModel: 'u',
    apiKey: 'k',
    prefill: false,
    ...overrides,
  };
}

/** A deployment; overrides replace whole fields (pass `target: testTarget({...})` to change the target). */
export function testDeployment(overrides: Partial<Deployment> = {}): Deployment {
  return {
    name: 'd',
    model: 'm',
    provider: 'openai',
    target: testTarget(),
    weight: 1,
    priority: 1,
    region: undefined,
    euResident: false,
    pricing: undefined,
    capabilities: new Set<Capability>(['chat']),
    contextWindow: undefined,
    timeouts: { totalMs: 1_000, connectMs: 100, headersMs: 1_000, firstTokenMs: undefined, idleMs: 1_000 },
    ...overrides,
  };
}

/**
 * A slot on `d` for a test that reports an outcome on it; a refused claim fails the test here
 * (tests about refusals call `health.claim` and expect `undefined`).
 */
export function claimed(health: HealthRegistry, d: Deployment): Claim {
  const claim = health.claim(d);
  if (!claim) throw new Error(`test: the circuit of ${d.name} refused a claim`);
  return claim;
}
