/** One behavioural suite, run against the in-process and the Redis usage store. */
import { afterEach, describe, expect, it } from 'vitest';
import type { UsageRecord, UsageStore } from '../../accounting/usage.ts';
import { toMicros } from '../money.ts';
import { DAY_MS, T0, usageRecord as rec } from './fixtures.ts';
import { usageBackends, type UsageBackendOptions, type UsageFixture } from './testing.ts';

const MARCH = { from: '2025-03-01', to: '2025-03-31' };
const q = (over: Partial<Parameters<UsageStore['rollups']>[0]> = {}) => ({
  tenant: 'acme',
  ...MARCH,
  ...over,
});

describe.each(usageBackends)('usage store ($name)', (backend) => {
  let fixture: UsageFixture | undefined;

  async function open(opts: UsageBackendOptions = {}): Promise<UsageStore> {
    fixture = await backend.create({ clock: () => T0, ...opts });
    return fixture.open();
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('starts empty', async () => {
    const usage = await open();
    expect(await usage.rollups(q())).toEqual([]);
    expect(await usage.rollups(q({ tenant: undefined }))).toEqual([]);
    expect(await usage.logs({ ...q(), limit: 10 })).toEqual([]);
    expect(await usage.security(q())).toEqual([]);
    expect(await usage.dimensions('acme')).toEqual({ keys: [], models: [], providers: [] });
    expect(await usage.tenants()).toEqual([]);
  });

  it('rolls records up by day × tenant × key × model × provider, money exact to the µ$', async () => {
    const usage = await open();
    await usage.record(rec({ costUsd: 0.1, promptTokens: 10, completionTokens: 5 }));
    await usage.record(rec({ costUsd: 0.2, promptTokens: 20, completionTokens: 7, latencyMs: 80 }));
    await usage.record(
      rec({ model: 'gpt-4o', costUsd: 1.0000004, status: 500, errorType: 'upstream_error' }),
    );
    await usage.record(rec({ at: T0 + DAY_MS, costUsd: 0.3 }));
    const rows = await usage.rollups(q());
    expect(rows.map((r) => [r.day, r.model, r.requests, r.costUsd])).toEqual([
      ['2025-03-14', 'gpt-4o', 1, 1],
      ['2025-03-14', 'gpt-4o-mini', 2, 0.3],
      ['2025-03-15', 'gpt-4o-mini', 1, 0.3],
    ]);
    expect(rows[0]).toMatchObject({
      tenant: 'acme',
      keyId: 'default/acme-ci',
      provider: 'openai',
      errors: 1,
    });
    expect(rows[1]).toMatchObject({
      promptTokens: 30,
      completionTokens: 12,
      totalTokens: 42,
      latencyMsTotal: 200,
      euRequests: 2,
      nonEuRequests: 0,
      errors: 0,
    });
  });

  it('counts EU-resident and other deployments apart, and unserved requests in neither', async () => {
    const usage = await open();
    await usage.record(rec({ euResident: true }));
    await usage.record(rec({ euResident: false, deployment: 'gpt-4o-mini-us' }));
    await usage.record(rec({ euResident: false, deployment: 'gpt-4o-mini-us' }));
    await usage.record(
      rec({ deployment: undefined, provider: undefined, euResident: false, status: 402, costUsd: 0 }),
    );
    const rows = await usage.rollups(q());
    expect(rows.map((r) => [r.provider, r.requests, r.euRequests, r.nonEuRequests, r.errors])).toEqual([
      ['', 1, 0, 0, 1],
      ['openai', 3, 1, 2, 0],
    ]);
  });

  it('counts a record once however often it is retried, from any handle', async () => {
    const usage = await open();
    const other = await fixture!.open();
    const r = rec({ costUsd: 0.25 });
    expect(await usage.record(r)).toBe(true);
    expect(await usage.record(r)).toBe(false);
    expect(await other.record({ ...r })).toBe(false);
    // The same request id in another tenant is another tenant's request.
    expect(await other.record({ ...r, tenant: 'globex' })).toBe(true);
    expect((await usage.rollups(q())).map((x) => [x.requests, x.costUsd])).toEqual([[1, 0.25]]);
    expect(await usage.logs({ ...q(), limit: 10 })).toHaveLength(1);
  });

  it('forgets ids after the dedupe window', async () => {
    const usage = await open({ dedupeMs: 30, clock: Date.now });
    const r = rec();
    expect(await usage.record(r)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await usage.record(r)).toBe(true);
  });

  it('filters by date range, key, model and provider, and spans tenants when none is given', async () => {
    const usage = await open();
    await usage.record(rec({ at: T0 - 20 * DAY_MS }));
    await usage.record(rec({ keyId: 'default/acme-web' }));
    await usage.record(rec({ model: 'claude-sonnet', provider: 'anthropic', deployment: 'claude' }));
    await usage.record(rec({ tenant: 'globex', keyId: 'default/globex-ci' }));
    expect((await usage.rollups(q())).length).toBe(2);
    expect((await usage.rollups(q({ from: '2025-02-01' }))).length).toBe(3);
    expect((await usage.rollups(q({ keyId: 'default/acme-web' }))).map((r) => r.keyId)).toEqual([
      'default/acme-web',
    ]);
    expect((await usage.rollups(q({ model: 'claude-sonnet' }))).map((r) => r.provider)).toEqual([
      'anthropic',
    ]);
    expect((await usage.rollups(q({ provider: 'openai' }))).map((r) => r.keyId)).toEqual([
      'default/acme-web',
    ]);
    expect((await usage.rollups(q({ tenant: 'globex' }))).map((r) => r.tenant)).toEqual(['globex']);
    expect((await usage.rollups(q({ tenant: undefined }))).map((r) => r.tenant)).toEqual([
      'acme',
      'acme',
      'globex',
    ]);
    expect((await usage.rollups(q({ tenant: 'nobody' }))).length).toBe(0);
  });

  it('rolls up cache, guardrail and compression outcomes', async () => {
    const usage = await open();
    const cache = (band: 'DIRECT' | 'REUSE' | 'TWEAK' | 'MISS' | 'SKIP', saved = 0) => ({
      band,
      score: 0.97,
      tokensSaved: saved ? 150 : 0,
      savedUsd: saved,
      creditedUsd: saved / 10,
      latencyMs: 3,
    });
    await usage.record(rec({ cache: cache('DIRECT', 0.01), costUsd: 0.02 }));
    await usage.record(rec({ cache: cache('REUSE', 0.02), costUsd: 0.03 }));
    await usage.record(rec({ cache: cache('TWEAK', 0.005), costUsd: 0.001 }));
    await usage.record(rec({ cache: cache('MISS'), costUsd: 0.5 }));
    await usage.record(rec({ cache: cache('SKIP'), costUsd: 0.5 }));
    await usage.record(
      rec({
        guardrails: { action: 'block', findings: [{ guardrail: 'secrets', category: 'aws', count: 1 }] },
      }),
    );
    await usage.record(rec({ guardrails: { action: 'flag', findings: [] } }));
    await usage.record(rec({ guardrails: { action: 'redact', findings: [] } }));
    await usage.record(rec({ guardrails: { action: 'allow', findings: [] } }));
    await usage.record(
      rec({ compression: { ratio: 0.75, originalTokens: 8000, tokens: 2000, savedUsd: 0.006 } }),
    );
    await usage.record(rec({ compression: { ratio: 0, originalTokens: 100, tokens: 100, savedUsd: 0 } }));
    const [row] = await usage.rollups(q());
    expect(row).toMatchObject({
      requests: 11,
      cacheLookups: 4,
      cacheHits: 3,
      cacheDirect: 1,
      cacheReuse: 1,
      cacheTweak: 1,
      cacheSavedUsd: 0.035,
      cacheCreditedUsd: 0.0035,
      cacheHitCostUsd: 0.051,
      tokensSaved: 450,
      guardrailBlocks: 1,
      guardrailFlags: 1,
      guardrailRedactions: 1,
      compressedRequests: 1,
      compressionOriginalTokens: 8000,
      compressionSavedTokens: 6000,
      compressionSavedUsd: 0.006,
    });
  });

  it('keeps security counters per day × guardrail × category × action', async () => {
    const usage = await open();
    const findings = [
      { guardrail: 'pii', category: 'EMAIL', count: 3 },
      { guardrail: 'pii', category: 'EMAIL', count: 1 },
      { guardrail: 'prompt-injection', category: 'jailbreak', count: 1, action: 'block' as const },
    ];
    await usage.record(rec({ guardrails: { action: 'redact', findings } }));
    await usage.record(rec({ guardrails: { action: 'redact', findings: findings.slice(0, 1) } }));
    await usage.record(
      rec({ at: T0 + DAY_MS, guardrails: { action: 'block', findings: findings.slice(2) } }),
    );
    // Allowed requests are not violations, whatever was noticed.
    await usage.record(rec({ guardrails: { action: 'allow', findings: findings.slice(0, 1) } }));
    await usage.record(
      rec({ tenant: 'globex', guardrails: { action: 'flag', findings: findings.slice(0, 1) } }),
    );
    expect(await usage.security(q())).toEqual([
      {
        tenant: 'acme',
        day: '2025-03-14',
        guardrail: 'pii',
        category: 'EMAIL',
        action: 'redact',
        count: 2,
        findings: 7,
      },
      {
        tenant: 'acme',
        day: '2025-03-14',
        guardrail: 'prompt-injection',
        category: 'jailbreak',
        action: 'block',
        count: 1,
        findings: 1,
      },
      {
        tenant: 'acme',
        day: '2025-03-15',
        guardrail: 'prompt-injection',
        category: 'jailbreak',
        action: 'block',
        count: 1,
        findings: 1,
      },
    ]);
    expect((await usage.security(q({ from: '2025-03-15' }))).length).toBe(1);
    // Sorted by day first, then tenant.
    expect((await usage.security(q({ tenant: undefined }))).map((r) => r.tenant)).toEqual([
      'acme',
      'acme',
      'globex',
      'acme',
    ]);
  });

  it('logs records newest first, filtered, limited and bounded per tenant', async () => {
    const usage = await open({ logLimit: 5 });
    const records: UsageRecord[] = [];
    for (let i = 0; i < 8; i++) {
      const r = rec({ at: T0 + i * 1000, model: i % 2 ? 'gpt-4o' : 'gpt-4o-mini', costUsd: i / 100 });
      records.push(r);
      await usage.record(r);
    }
    await usage.record(rec({ tenant: 'globex', at: T0 + 4500 }));
    const all = await usage.logs({ ...q(), limit: 100 });
    expect(all.map((r) => r.id)).toEqual(
      records
        .slice(3)
        .reverse()
        .map((r) => r.id),
    );
    expect(all[0]).toEqual(JSON.parse(JSON.stringify(records[7])));
    expect((await usage.logs({ ...q(), limit: 2 })).map((r) => r.id)).toEqual([
      records[7]!.id,
      records[6]!.id,
    ]);
    expect((await usage.logs({ ...q({ model: 'gpt-4o' }), limit: 100 })).map((r) => r.id)).toEqual([
      records[7]!.id,
      records[5]!.id,
      records[3]!.id,
    ]);
    expect(await usage.logs({ ...q({ from: '2025-03-15' }), limit: 100 })).toEqual([]);
    const global = await usage.logs({ ...q({ tenant: undefined }), limit: 4 });
    expect(global.map((r) => r.tenant)).toEqual(['acme', 'acme', 'acme', 'globex']);
  });

  it('lists the keys, models, providers and tenants seen', async () => {
    const usage = await open();
    await usage.record(rec({ keyId: 'default/b' }));
    await usage.record(rec({ keyId: 'default/a', model: 'claude', provider: 'anthropic' }));
    await usage.record(rec({ deployment: undefined, provider: undefined, model: 'nope', status: 404 }));
    await usage.record(rec({ tenant: 'globex' }));
    expect(await usage.dimensions('acme')).toEqual({
      keys: ['default/a', 'default/acme-ci', 'default/b'],
      models: ['claude', 'gpt-4o-mini', 'nope'],
      providers: ['anthropic', 'openai'],
    });
    expect(await usage.tenants()).toEqual(['acme', 'globex']);
  });

  it('sums exactly to the micro-dollar when three clients record concurrently, duplicates included', async () => {
    const stores = [await open(), await fixture!.open(), await fixture!.open()];
    const records = Array.from({ length: 300 }, (_, i) =>
      rec({
        keyId: `default/k${i % 3}`,
        model: i % 2 ? 'gpt-4o' : 'gpt-4o-mini',
        costUsd: 0.000001 * ((i * 7919) % 100_000) + 0.0000004,
        promptTokens: i,
        completionTokens: 2 * i,
      }),
    );
    // Every record goes through two different clients at once, as a retried request would.
    const results = await Promise.all(
      records.flatMap((r, i) => [stores[i % 3]!.record(r), stores[(i + 1) % 3]!.record({ ...r })]),
    );
    expect(results.filter(Boolean)).toHaveLength(300);
    const rows = await stores[2]!.rollups(q());
    const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0);
    expect(sum((r) => r.requests)).toBe(300);
    expect(sum((r) => toMicros(r.costUsd))).toBe(records.reduce((s, r) => s + toMicros(r.costUsd), 0));
    expect(sum((r) => r.promptTokens)).toBe((299 * 300) / 2);
    expect(sum((r) => r.totalTokens)).toBe(3 * ((299 * 300) / 2));
    expect(rows.length).toBe(6);
    expect((await stores[1]!.logs({ ...q(), limit: 1000 })).length).toBe(300);
  });
});
