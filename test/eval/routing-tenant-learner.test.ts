import { describe, expect, it } from 'vitest';
import { asRequest } from './routing-outcomes.ts';
import {
  emptyState,
  exampleOf,
  fit,
  fitGuarded,
  observe,
  stateBytes,
  TENANT_CONFIG,
  tenantScore,
  zeroModel,
  type TenantExample,
  type TenantLearnerConfig,
  type TenantState,
} from './routing-tenant-learner.ts';
import { order } from './routing-tenant-sim.ts';

// Two kinds of traffic for one tenant: prompts about invoices (the weak model fails) and about
// weather (it does not). The shipped score cannot tell them apart; the tenant's labels can.
const hard = (i: number): string =>
  `Reconcile invoice ${i} against the ledger entries and list each mismatch`;
const easy = (i: number): string => `What is the weather like in town number ${i} today`;

function trained(config: TenantLearnerConfig, count: number): TenantState {
  let s = emptyState();
  for (let i = 0; i < count; i++) {
    s = observe(s, exampleOf(asRequest(hard(i))), true, config);
    s = observe(s, exampleOf(asRequest(easy(i))), false, config);
  }
  return s;
}

describe('per-tenant calibration learner', () => {
  it('ranks exactly like the shipped score before any label', () => {
    const x = exampleOf(asRequest(hard(1)));
    expect(tenantScore(fit(emptyState(), TENANT_CONFIG), x)).toBe(x.base);
    expect(tenantScore(zeroModel(), x)).toBe(x.base);
  });

  it('learns the tenant-specific split from its outcomes, on prompts it never saw', () => {
    const model = fit(trained(TENANT_CONFIG, 20), TENANT_CONFIG);
    const h = exampleOf(asRequest(hard(999)));
    const e = exampleOf(asRequest(easy(999)));
    expect(tenantScore(model, h) - tenantScore(model, e)).toBeGreaterThan(h.base - e.base + 1);
  });

  it('refits to identical weights from the same labels (no randomness)', () => {
    const s = trained(TENANT_CONFIG, 10);
    const a = fit(s, TENANT_CONFIG);
    const b = fit(s, TENANT_CONFIG);
    expect(Array.from(a.hashed)).toEqual(Array.from(b.hashed));
    expect([a.bias, a.baseWeight]).toEqual([b.bias, b.baseWeight]);
  });

  it('keeps at most `capacity` labelled requests, forgetting the oldest first', () => {
    const config = { ...TENANT_CONFIG, capacity: 3 };
    let s = emptyState();
    const xs: TenantExample[] = [];
    for (let i = 0; i < 10; i++) {
      const x = exampleOf(asRequest(easy(i)));
      xs.push(x);
      s = observe(s, x, i % 2 === 0, config);
      expect(s.examples.length).toBe(Math.min(i + 1, 3));
    }
    expect(new Set(s.examples)).toEqual(new Set(xs.slice(7)));
    expect(s.labels.filter(Boolean)).toHaveLength(1);
    expect(stateBytes(s)).toBeLessThan(3 * (8 + 21 * 4 + 2 * 1500));
  });

  it('does not mutate the state it was given', () => {
    const config = { ...TENANT_CONFIG, capacity: 2 };
    const s = trained(config, 1);
    const before = [...s.examples];
    observe(s, exampleOf(asRequest(hard(5))), true, config);
    expect(s.examples).toEqual(before);
  });

  it('guard: serves the shipped score when the ring holds one outcome only', () => {
    let s = emptyState();
    for (let i = 0; i < 12; i++) s = observe(s, exampleOf(asRequest(easy(i))), false, TENANT_CONFIG);
    const m = fitGuarded(s, { ...TENANT_CONFIG, guardFolds: 5 });
    expect(Array.from(m.hashed).every((w) => w === 0)).toBe(true);
    expect(m.bias).toBe(0);
  });

  it('shuffles deterministically per seed', () => {
    expect(order(20, 3)).toEqual(order(20, 3));
    expect(order(20, 3)).not.toEqual(order(20, 4));
    expect([...order(20, 3)].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});
