/**
 * What a settlement still in flight is counted as owing (the shutdown logs it when a store
 * hangs): every dollar its jobs settle, a side call charged to a hold of its own included.
 */
import { expect, it } from 'vitest';
import type { Deployment } from '../config/snapshot.ts';
import { settle, type AccountingDeps } from './settlement.ts';
import type { RequestContext } from './context.ts';
import { SettlementsInFlight } from './settlements-in-flight.ts';

/** A store that takes every command and never answers. */
const hang = (): Promise<never> => new Promise<never>(() => undefined);

it('counts a side call under its own hold among the dollars a settlement in flight owes', async () => {
  const deployment = { name: 'd', model: 'm', provider: 'openai', euResident: false } as Deployment;
  const settlements = new SettlementsInFlight();
  const quiet = { error: () => undefined, warn: () => undefined };
  const deps = {
    stores: {
      settler: undefined,
      budgets: { settle: hang, release: hang },
      rateLimiter: { adjust: hang },
      usage: { record: hang },
      deploymentQuota: { adjust: hang },
    },
    metrics: {
      charged: () => undefined,
      guardrail: () => undefined,
      accountingFailures: { inc: () => undefined },
    },
    recorder: { record: () => undefined },
    settlements,
  } as unknown as AccountingDeps;
  const ctx = {
    id: 'r1',
    startedAt: Date.now(),
    log: quiet,
    tenant: { name: 't' },
    key: { id: 'k' },
    usage: {},
    admission: { reservation: { id: 'res-main' } },
    sideCalls: [
      // State extraction run under a hold of its own (compression/stage.ts): $0.30 on that hold.
      {
        label: 'compression',
        deployment,
        costUsd: 0.3,
        promptTokens: 10,
        completionTokens: 10,
        reservation: { id: 'res-side' },
      },
      // One charged to the request's hold: $0.05 there.
      { label: 'compression', deployment, costUsd: 0.05, promptTokens: 1, completionTokens: 1 },
    ],
  } as unknown as RequestContext;
  await settle(deps, ctx, {
    status: 200,
    deployment,
    usage: { prompt_tokens: 1, completion_tokens: 1 },
    costUsd: 0.7,
  });
  expect(settlements.size).toBe(1);
  expect(settlements.owedUsd).toBeCloseTo(1.05, 9);
});
