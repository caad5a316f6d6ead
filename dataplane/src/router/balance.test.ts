import { describe, expect, it } from 'vitest';
import type { Deployment } from '../config/snapshot.ts';
import { effectiveWeight, orderDeployments } from './balance.ts';
import type { Availability, HealthView } from './health.ts';
import { testDeployment } from './testing.ts';

const dep = (name: string, over: Partial<Deployment> = {}): Deployment => testDeployment({ name, ...over });

/** mulberry32: small, seeded, good enough for frequency tests. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const idle: HealthView = { inflight: 0, latencyMs: 0 };
const ok: Availability = { ok: true };

function order(
  deployments: Deployment[],
  random: () => number,
  views: Record<string, HealthView> = {},
  availability: Record<string, Availability> = {},
) {
  return orderDeployments({
    deployments,
    view: (d) => views[d.name] ?? idle,
    availability: (d) => availability[d.name] ?? ok,
    random,
  });
}

/** Share of draws in which each deployment came first. */
function firstShares(
  deployments: Deployment[],
  draws: number,
  seed: number,
  views: Record<string, HealthView> = {},
): Record<string, number> {
  const random = seeded(seed);
  const counts: Record<string, number> = {};
  for (let i = 0; i < draws; i++) {
    const first = order(deployments, random, views).ordered[0]!.name;
    counts[first] = (counts[first] ?? 0) + 1;
  }
  return Object.fromEntries(deployments.map((d) => [d.name, (counts[d.name] ?? 0) / draws]));
}

const DRAWS = 20_000;

describe('priority groups', () => {
  it('orders groups lowest priority first, whatever the input order and the draws', () => {
    const ds = [
      dep('p3', { priority: 3 }),
      dep('p1a', { priority: 1 }),
      dep('p2', { priority: 2 }),
      dep('p1b', { priority: 1, weight: 100 }),
      dep('p0', { priority: 0 }),
    ];
    const random = seeded(1);
    for (let i = 0; i < 500; i++) {
      const names = order(ds, random).ordered.map((d) => d.name);
      expect(names[0]).toBe('p0');
      expect(new Set(names.slice(1, 3))).toEqual(new Set(['p1a', 'p1b']));
      expect(names.slice(3)).toEqual(['p2', 'p3']);
    }
  });

  it('sorts priorities numerically, not as strings', () => {
    const names = order([dep('p10', { priority: 10 }), dep('p9', { priority: 9 })], seeded(2)).ordered.map(
      (d) => d.name,
    );
    expect(names).toEqual(['p9', 'p10']);
  });

  it('a lower-priority group is used even when a higher one is much heavier', () => {
    const ds = [dep('backup', { priority: 2, weight: 1_000 }), dep('main', { priority: 1, weight: 0.001 })];
    expect(order(ds, seeded(3)).ordered.map((d) => d.name)).toEqual(['main', 'backup']);
  });
});

describe('weighted balancing', () => {
  it('is a permutation: every available deployment exactly once', () => {
    const ds = ['a', 'b', 'c', 'd'].map((n, i) => dep(n, { weight: i + 1 }));
    const random = seeded(4);
    for (let i = 0; i < 200; i++) {
      const names = order(ds, random).ordered.map((d) => d.name);
      expect([...names].sort()).toEqual(['a', 'b', 'c', 'd']);
    }
  });

  it('weights 3:1 → the heavy one first about 75% of the time', () => {
    const shares = firstShares([dep('a', { weight: 3 }), dep('b', { weight: 1 })], DRAWS, 42);
    expect(shares.a).toBeGreaterThan(0.735);
    expect(shares.a).toBeLessThan(0.765);
  });

  it('weights 1:2:3 → first-choice shares 1/6, 2/6, 3/6', () => {
    const shares = firstShares(
      [dep('a', { weight: 1 }), dep('b', { weight: 2 }), dep('c', { weight: 3 })],
      DRAWS,
      7,
    );
    expect(shares.a).toBeCloseTo(1 / 6, 1);
    expect(shares.b).toBeCloseTo(2 / 6, 1);
    expect(shares.c).toBeCloseTo(3 / 6, 1);
    expect(Math.abs(shares.a! - 1 / 6)).toBeLessThan(0.015);
    expect(Math.abs(shares.c! - 1 / 2)).toBeLessThan(0.015);
  });

  it('fractional weights work like their ratio', () => {
    const shares = firstShares([dep('a', { weight: 0.3 }), dep('b', { weight: 0.1 })], DRAWS, 8);
    expect(Math.abs(shares.a! - 0.75)).toBeLessThan(0.015);
  });

  it('equal weights split evenly', () => {
    const shares = firstShares([dep('a'), dep('b')], DRAWS, 9);
    expect(Math.abs(shares.a! - 0.5)).toBeLessThan(0.015);
  });

  it('a busy deployment is chosen less: one in-flight call halves its weight', () => {
    const shares = firstShares([dep('busy'), dep('idle')], DRAWS, 10, {
      busy: { inflight: 1, latencyMs: 0 },
    });
    expect(Math.abs(shares.busy! - 1 / 3)).toBeLessThan(0.015);
  });

  it('a slow deployment is chosen less: twice as slow, half the weight', () => {
    const shares = firstShares([dep('slow'), dep('fast')], DRAWS, 11, {
      slow: { inflight: 0, latencyMs: 400 },
      fast: { inflight: 0, latencyMs: 200 },
    });
    expect(Math.abs(shares.slow! - 1 / 3)).toBeLessThan(0.015);
  });

  it('unknown latency counts as fast (a new deployment gets its share)', () => {
    const shares = firstShares([dep('new'), dep('known')], DRAWS, 12, {
      known: { inflight: 0, latencyMs: 300 },
    });
    expect(Math.abs(shares.new! - 0.5)).toBeLessThan(0.015);
  });

  it('weight 0 is never chosen, even when it is the only deployment', () => {
    const random = seeded(13);
    for (let i = 0; i < 1_000; i++) {
      expect(order([dep('off', { weight: 0 }), dep('on')], random).ordered.map((d) => d.name)).toEqual([
        'on',
      ]);
    }
    const alone = order([dep('off', { weight: 0 })], random);
    expect(alone.ordered).toEqual([]);
    expect(alone.skipped).toEqual([]);
  });

  it('a single deployment is returned without drawing', () => {
    let calls = 0;
    const out = order([dep('only')], () => {
      calls++;
      return 0.5;
    });
    expect(out.ordered.map((d) => d.name)).toEqual(['only']);
    expect(calls).toBe(0);
  });
});

describe('unavailable deployments', () => {
  it('are left out and reported with their reason and until', () => {
    const ds = [dep('a'), dep('open'), dep('cool', { priority: 2 }), dep('b', { priority: 2 })];
    const out = order(
      ds,
      seeded(14),
      {},
      {
        open: { ok: false, until: 5_000, reason: 'circuit_open' },
        cool: { ok: false, until: 7_000, reason: 'cooldown' },
      },
    );
    expect(out.ordered.map((d) => d.name)).toEqual(['a', 'b']);
    expect(out.skipped.map((s) => ({ name: s.deployment.name, until: s.until, reason: s.reason }))).toEqual([
      { name: 'open', until: 5_000, reason: 'circuit_open' },
      { name: 'cool', until: 7_000, reason: 'cooldown' },
    ]);
    expect(out.skipped[0]!.deployment).toBe(ds[1]);
  });

  it('all unavailable → nothing ordered, all reported', () => {
    const out = order(
      [dep('a'), dep('b')],
      seeded(15),
      {},
      {
        a: { ok: false, until: 1, reason: 'cooldown' },
        b: { ok: false, until: 2, reason: 'circuit_open' },
      },
    );
    expect(out.ordered).toEqual([]);
    expect(out.skipped).toHaveLength(2);
  });
});

describe('effectiveWeight', () => {
  it('divides the weight by load and by slowness relative to the fastest', () => {
    expect(effectiveWeight(2, { inflight: 0, latencyMs: 0 }, 0)).toBe(2);
    expect(effectiveWeight(2, { inflight: 3, latencyMs: 0 }, 100)).toBe(0.5);
    expect(effectiveWeight(2, { inflight: 0, latencyMs: 300 }, 100)).toBeCloseTo(2 / 3);
    expect(effectiveWeight(2, { inflight: 1, latencyMs: 200 }, 100)).toBe(0.5);
    expect(effectiveWeight(2, { inflight: 0, latencyMs: 100 }, 100)).toBe(2);
  });

  it('no slowness penalty when the fastest is unknown', () => {
    expect(effectiveWeight(1, { inflight: 0, latencyMs: 500 }, 0)).toBe(1);
  });
});
