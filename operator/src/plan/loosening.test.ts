/**
 * Which over-the-limit edits may wait at their previous version: every ModelDeployment field
 * judged, each way it can change.
 */
import { ModelDeploymentSpec, type ModelDeploymentSpec as Spec } from '@gantry/crds';
import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_RULES, deploymentTightenings, tenantLoosensOnly } from './loosening.ts';

const base: Spec = {
  model: 'gpt-4o-mini',
  provider: 'openai',
  upstreamModel: 'gpt-4o-mini',
  baseUrl: 'https://api.openai.com/v1',
  credentialsSecretRef: { name: 'openai', key: 'apiKey' },
  pricing: { inputPerMillionTokens: 0.15, outputPerMillionTokens: 0.6, perImage: 0.01 },
  capabilities: ['chat', 'streaming', 'vision'],
  fallbacks: ['gpt-b', 'gpt-c'],
  euResident: false,
  region: 'eu-west-1',
  rpm: 100,
  tpm: 10000,
  contextWindow: 128000,
  maxOutputTokens: 4096,
};
/** base with these fields set; undefined removes one. */
const edit = (patch: Partial<Record<keyof Spec, unknown>>): Spec => {
  const out: Record<string, unknown> = { ...base, ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete out[k];
  return out as Spec;
};
const price = (p: Partial<NonNullable<Spec['pricing']>>) => ({ ...base.pricing!, ...p });

/** [what, patch to base, fields expected to tighten ([] = may wait)]. */
const table: [string, Partial<Record<keyof Spec, unknown>>, (keyof Spec)[]][] = [
  ['nothing changed', {}, []],
  // Money: any price higher, or a price added or removed, applies now.
  ['input price raised', { pricing: price({ inputPerMillionTokens: 0.2 }) }, ['pricing']],
  ['output price raised', { pricing: price({ outputPerMillionTokens: 0.61 }) }, ['pricing']],
  ['unit price raised', { pricing: price({ perImage: 0.02 }) }, ['pricing']],
  [
    'one price lowered, another raised',
    { pricing: price({ inputPerMillionTokens: 0.1, perImage: 0.5 }) },
    ['pricing'],
  ],
  [
    'a price added (was the fallback rate)',
    { pricing: price({ cachedInputPerMillionTokens: 0.075 }) },
    ['pricing'],
  ],
  ['a price removed', { pricing: { inputPerMillionTokens: 0.15, outputPerMillionTokens: 0.6 } }, ['pricing']],
  ['pricing removed', { pricing: undefined }, ['pricing']],
  ['prices lowered', { pricing: price({ inputPerMillionTokens: 0.1, perImage: 0.005 }) }, []],
  [
    'prices equal, written in another order',
    { pricing: { perImage: 0.01, outputPerMillionTokens: 0.6, inputPerMillionTokens: 0.15 } },
    [],
  ],
  // Limits: absent is none.
  ['rpm lowered', { rpm: 99 }, ['rpm']],
  ['rpm raised', { rpm: 1000 }, []],
  ['rpm removed', { rpm: undefined }, []],
  ['tpm lowered', { tpm: 1 }, ['tpm']],
  ['tpm raised', { tpm: 20000 }, []],
  ['tpm removed', { tpm: undefined }, []],
  // Billing caps: the old, lower cap would cut billed usage below what the new one allows.
  ['contextWindow lowered', { contextWindow: 8000 }, ['contextWindow']],
  ['contextWindow raised', { contextWindow: 200000 }, ['contextWindow']],
  ['contextWindow removed', { contextWindow: undefined }, ['contextWindow']],
  ['maxOutputTokens lowered', { maxOutputTokens: 1024 }, ['maxOutputTokens']],
  ['maxOutputTokens raised', { maxOutputTokens: 16384 }, ['maxOutputTokens']],
  ['maxOutputTokens removed', { maxOutputTokens: undefined }, ['maxOutputTokens']],
  // What may be asked of it.
  ['a capability removed', { capabilities: ['chat', 'streaming'] }, ['capabilities']],
  ['a capability added', { capabilities: ['chat', 'streaming', 'vision', 'images'] }, []],
  ['capabilities reordered', { capabilities: ['vision', 'chat', 'streaming'] }, []],
  ['capabilities removed (the default set)', { capabilities: undefined }, ['capabilities']],
  ['a fallback removed', { fallbacks: ['gpt-b'] }, ['fallbacks']],
  ['fallbacks removed', { fallbacks: undefined }, ['fallbacks']],
  ['a fallback added', { fallbacks: ['gpt-b', 'gpt-c', 'gpt-d'] }, []],
  ['fallbacks reordered', { fallbacks: ['gpt-c', 'gpt-b'] }, ['fallbacks']],
  ['a fallback added first', { fallbacks: ['gpt-d', 'gpt-b', 'gpt-c'] }, ['fallbacks']],
  ['a fallback replaced', { fallbacks: ['gpt-b', 'gpt-d'] }, ['fallbacks']],
  // What is sent where.
  ['model renamed', { model: 'mini' }, ['model']],
  ['upstream model changed', { upstreamModel: 'gpt-4o' }, ['upstreamModel']],
  ['region changed', { region: 'us-east-1' }, ['region']],
  ['region removed', { region: undefined }, ['region']],
  ['marked EU-resident', { euResident: true }, []],
  ['euResident removed (false)', { euResident: undefined }, []],
  ['baseUrl changed', { baseUrl: 'https://other.example/v1' }, ['baseUrl']],
  ['provider changed', { provider: 'openai-compatible' }, ['provider']],
  [
    'credential ref changed',
    { credentialsSecretRef: { name: 'other', key: 'apiKey' } },
    ['credentialsSecretRef'],
  ],
  ['apiKeyEnv added', { apiKeyEnv: 'OPENAI_API_KEY' }, ['apiKeyEnv']],
  // Routing: a drain or a shift of traffic applies now.
  ['weight set to 0 (drained)', { weight: 0 }, ['weight']],
  ['weight changed', { weight: 5 }, ['weight']],
  ['priority changed', { priority: 0 }, ['priority']],
  ['priority raised (tried later)', { priority: 5 }, ['priority']],
  // Nothing anyone is promised or charged.
  ['apiVersion set', { apiVersion: '2024-10-21' }, []],
  ['timeoutMs changed', { timeoutMs: 1000 }, []],
  ['connectTimeoutMs changed', { connectTimeoutMs: 100 }, []],
  ['headersTimeoutMs changed', { headersTimeoutMs: 100 }, []],
  ['firstTokenTimeoutMs changed', { firstTokenTimeoutMs: 100 }, []],
  ['streamIdleTimeoutMs changed', { streamIdleTimeoutMs: 100 }, []],
  ['retry added', { retry: { attempts: 3 } }, []],
  ['circuitBreaker added', { circuitBreaker: { failureThreshold: 1 } }, []],
  // Together: a loosening beside a tightening is still a tightening.
  ['rpm raised and price raised', { rpm: 1000, pricing: price({ outputPerMillionTokens: 1 }) }, ['pricing']],
  ['an unknown field (another schema version)', { future: 1 } as never, ['future' as keyof Spec]],
];

describe('deploymentTightenings', () => {
  it.each(table)('%s', (_what, patch, expected) => {
    expect(deploymentTightenings(base, edit(patch)).sort()).toEqual([...expected].sort());
  });

  it('judges the absent side of every limit and of pricing', () => {
    const bare = edit({ rpm: undefined, tpm: undefined, pricing: undefined, contextWindow: undefined });
    expect(deploymentTightenings(bare, edit({ pricing: undefined, contextWindow: undefined }))).toEqual([
      'rpm',
      'tpm',
    ]);
    expect(
      deploymentTightenings(bare, edit({ rpm: undefined, tpm: undefined, contextWindow: undefined })),
    ).toEqual(['pricing']);
    expect(deploymentTightenings(edit({ euResident: true }), base)).toEqual(['euResident']);
    expect(deploymentTightenings(edit({ fallbacks: undefined }), base)).toEqual([]);
    expect(deploymentTightenings(edit({ capabilities: undefined }), base)).toEqual(['capabilities']);
  });

  it('has a rule for every field of the schema, and each rule is used', () => {
    expect(Object.keys(DEPLOYMENT_RULES).sort()).toEqual(Object.keys(ModelDeploymentSpec.properties).sort());
    const judged = new Set(table.flatMap(([, patch]) => Object.keys(patch)));
    for (const field of Object.keys(DEPLOYMENT_RULES)) expect(judged, field).toContain(field);
  });
});

describe('tenantLoosensOnly', () => {
  const t = { tier: 'pro' as const, models: ['a', 'b'], wallet: { balanceUsd: 5 } };
  it.each([
    ['models added', { ...t, models: ['a', 'b', 'c'] }, true],
    ["'*' gained", { ...t, models: ['*'] }, true],
    ['balance raised', { ...t, wallet: { balanceUsd: 6 } }, true],
    ['a model removed', { ...t, models: ['a'] }, false],
    ['balance lowered', { ...t, wallet: { balanceUsd: 4 } }, false],
    ['wallet removed', { tier: 'pro' as const, models: ['a', 'b'] }, false],
    ['tier changed', { ...t, tier: 'free' as const }, false],
    ['guardrails added', { ...t, guardrails: { policyRef: { name: 'p' } } }, false],
  ])('%s → %s', (_what, is, loosens) => {
    expect(tenantLoosensOnly(t, is)).toBe(loosens);
  });
});
