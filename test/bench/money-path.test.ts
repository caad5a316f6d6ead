import { describe, expect, it } from 'vitest';
import {
  addedByMetering,
  moneyChecks,
  moneyConfig,
  moneyTables,
  readMoneySettings,
  redisCost,
  windowOrder,
  type KeyKind,
  type MoneyCell,
  type Store,
} from './money-path.ts';

const cell = (store: Store, key: KeyKind, connections: number, p50: number, cpu: number): MoneyCell => ({
  store,
  key,
  connections,
  stats: { requests: 100, errors: 0, rps: 1000 / p50, p50, p99: p50 * 3, ttfbP50: NaN, ttfbP99: NaN },
  gatewayCpuMs: cpu,
});

const cells: MoneyCell[] = [
  cell('redis', 'plain', 1, 1.0, 0.5),
  cell('redis', 'metered', 1, 1.3, 0.7),
  cell('memory', 'plain', 1, 0.8, 0.4),
  cell('memory', 'metered', 1, 0.9, 0.5),
  cell('redis', 'plain', 16, 4, 0.25),
];

describe('money path figures', () => {
  it('subtracts the plain key from the metered key per store and concurrency', () => {
    const added = addedByMetering(cells);
    expect(added).toHaveLength(2);
    const redis = added.find((a) => a.store === 'redis')!;
    expect(redis.connections).toBe(1);
    expect(redis.p50).toBeCloseTo(0.3);
    expect(redis.p99).toBeCloseTo(0.9);
    expect(redis.cpuMs).toBeCloseTo(0.2);
    expect(redis.rpsShare).toBeCloseTo(1 / 1.3);
  });

  it('compares Redis with in-process stores key by key', () => {
    const costs = redisCost(cells);
    expect(costs.map((c) => [c.key, c.connections])).toEqual([
      ['plain', 1],
      ['metered', 1],
    ]);
    expect(costs[0]!.p50).toBeCloseTo(0.2);
  });

  it('checks the Redis 1-connection p50 against 0.3 ms, or skips it without Redis', () => {
    const [pass] = moneyChecks(
      [{ store: 'redis', connections: 1, p50: 0.3, p99: 1, cpuMs: 0, rpsShare: 1 }],
      undefined,
    );
    expect(pass).toMatchObject({ verdict: 'PASS', actual: '0.300 ms', target: '<= 0.300 ms' });
    const [miss] = moneyChecks(
      [{ store: 'redis', connections: 1, p50: 0.31, p99: 1, cpuMs: 0, rpsShare: 1 }],
      undefined,
    );
    expect(miss!.verdict).toBe('MISS');
    const [none] = moneyChecks([], undefined);
    expect(none).toMatchObject({ verdict: 'MISS', actual: 'not measured' });
    const [skip] = moneyChecks([], 'no redis-server');
    expect(skip).toMatchObject({ verdict: 'SKIP', actual: 'no redis-server' });
  });

  it('renders the Redis-minus-memory table only when both were measured', () => {
    expect(moneyTables(cells, addedByMetering(cells))).toHaveLength(3);
    const redisOnly = cells.filter((c) => c.store === 'redis');
    expect(moneyTables(redisOnly, addedByMetering(redisOnly))).toHaveLength(2);
  });

  it('alternates which key goes first', () => {
    expect(windowOrder(0)).toEqual(['plain', 'metered']);
    expect(windowOrder(1)).toEqual(['metered', 'plain']);
  });
});

describe('money path settings and config', () => {
  it('defaults to both stores and rejects unknown ones', () => {
    expect(readMoneySettings({})).toEqual({
      seconds: 3,
      rounds: 4,
      warmupSeconds: 0.25,
      stores: ['redis', 'memory'],
    });
    expect(readMoneySettings({ BENCH_MONEY_STORES: 'memory' }).stores).toEqual(['memory']);
    expect(() => readMoneySettings({ BENCH_MONEY_STORES: 'redis,etcd' })).toThrow(/etcd/);
  });

  it('gives only the metered key a rate limit, a budget and a wallet, on a priced deployment', () => {
    const docs = moneyConfig('http://127.0.0.1:1')
      .split('---\n')
      .filter(Boolean)
      .map(
        (d) => JSON.parse(d) as { kind: string; metadata: { name: string }; spec: Record<string, unknown> },
      );
    const keys = Object.fromEntries(
      docs.filter((d) => d.kind === 'ApiKey').map((d) => [d.metadata.name, d.spec]),
    );
    expect(keys['bench-plain']).not.toHaveProperty('rateLimit');
    expect(keys['bench-plain']).not.toHaveProperty('budget');
    expect(keys['bench-metered']).toMatchObject({
      rateLimit: { requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000 },
      budget: { limitUsd: 1_000_000, period: 'monthly' },
    });
    const tenants = Object.fromEntries(
      docs.filter((d) => d.kind === 'Tenant').map((d) => [d.metadata.name, d.spec]),
    );
    expect(keys['bench-plain']).toMatchObject({ tenantRef: { name: 'bench' } });
    expect(tenants['bench']).not.toHaveProperty('wallet');
    expect(keys['bench-metered']).toMatchObject({ tenantRef: { name: 'bench-wallet' } });
    expect(tenants['bench-wallet']).toMatchObject({ wallet: { balanceUsd: 1_000_000 } });
    for (const t of Object.values(tenants)) expect(t).not.toHaveProperty('guardrails');
    const dep = docs.find((d) => d.kind === 'ModelDeployment')!;
    expect(dep.spec.pricing).toBeDefined();
  });
});
