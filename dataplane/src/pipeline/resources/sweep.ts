/**
 * What the settlement sweeps share (batches: resources/batch-sweep.ts; fine-tuning jobs:
 * fine-tuning/sweep.ts): each tick takes, and leases, the records least recently looked at
 * from the ownership store's queue of its family (shared by the pods with Redis: the lease
 * makes pods ticking together take different records, and the claim settles a record once
 * whoever looks), reads each from its deployment, settles finished work as a read does
 * (`chargeThenClaim`), and marks each looked at, which ends its lease.
 *
 * The sweeps call deployments directly, never through the router: nothing they meet (a slow
 * provider, a local error) counts against a deployment's health or trips its breaker.
 */
import type { ProviderKind } from '@gantry/crds';
import type { UsageEndpoint, UsageRecord } from '../../accounting/usage.ts';
import type { Deployment, Snapshot } from '../../config/snapshot.ts';
import type { Metrics } from '../../metrics.ts';
import type { ProviderAdapter } from '../../providers/types.ts';
import type { CallContext } from '../../router/calls.ts';
import type { UpstreamClient } from '../../router/upstream.ts';
import type { BudgetLimit } from '../../stores/budget.ts';
import type { Stores } from '../../stores/index.ts';
import { SWEEP_LEASE_MS, type OwnedRecord, type SweptFamily } from '../../stores/ownership/types.ts';
import type { UsageRecorder } from '../../stores/usage/index.ts';

/** Records looked at per sweep, so one tick stays a bounded amount of upstream reads. */
export const DEFAULT_SWEEP_LIMIT = 200;
/** One upstream read may take this long. */
export const READ_TIMEOUT_MS = 30_000;

/**
 * Records a tick takes (and leases) at once: as many as it can read within their lease
 * (`SWEEP_LEASE_MS`) at one read timeout each, less one read's time left for the store calls,
 * so no other pod takes a record this tick is still reading. A tick takes its `limit` in
 * such batches, one after another (200 records at 30 s each once outlasted the lease).
 */
export const PER_LEASE = Math.max(1, Math.floor(SWEEP_LEASE_MS / READ_TIMEOUT_MS) - 1);

export interface SweepDeps {
  stores: Stores;
  upstream: UpstreamClient;
  adapters: Readonly<Record<ProviderKind, ProviderAdapter>>;
  metrics: Metrics;
  recorder: UsageRecorder;
  snapshot: () => Snapshot;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  now?: () => number;
}

export interface SweepReport {
  /** Records read upstream. */
  checked: number;
  /** Finished work this sweep charged (the rest was charged by a read, or owed nothing). */
  charged: number;
  costUsd: number;
  /** Reads or settlements that failed; that work stays queued for a later sweep. */
  failed: number;
}

export interface Sweeper {
  /** One sweep; a tick while one runs waits for it instead of starting another. */
  tick(): Promise<SweepReport>;
  /** Resolves once no sweep is running (shutdown waits for it). */
  idle(): Promise<void>;
}

export type Outcome =
  { kind: 'running' } | { kind: 'gone' } | { kind: 'failed' } | { kind: 'finished'; costUsd?: number };

/** A sweeper over `family`'s queue, settling each record with `one`. */
export function sweeper(
  deps: QueueDeps,
  family: SweptFamily,
  limit: number,
  one: (record: OwnedRecord) => Promise<Outcome>,
): Sweeper {
  let running: Promise<SweepReport> | undefined;
  return {
    tick() {
      running ??= sweepQueue(deps, family, limit, one).finally(() => (running = undefined));
      return running;
    },
    async idle() {
      await running?.catch(() => undefined);
    },
  };
}

/** What walking the queue needs; reading and settling each record is `one`'s. */
type QueueDeps = Pick<SweepDeps, 'log'> & { stores: Pick<Stores, 'ownership'> };

async function sweepQueue(
  deps: QueueDeps,
  family: SweptFamily,
  limit: number,
  one: (record: OwnedRecord) => Promise<Outcome>,
): Promise<SweepReport> {
  const report: SweepReport = { checked: 0, charged: 0, costUsd: 0, failed: 0 };
  const owned = deps.stores.ownership;
  const seen = new Set<string>();
  while (seen.size < limit) {
    const want = Math.min(PER_LEASE, limit - seen.size);
    const batch = await owned.unsettled(want, family);
    let fresh = 0;
    for (const record of batch) {
      const key = `${record.tenant}\n${record.id}`;
      // The queue came round to work this tick already read: it waits for the next tick.
      if (seen.has(key)) {
        await owned.swept(record, false);
        continue;
      }
      seen.add(key);
      fresh++;
      await sweepOne(deps, family, one, record, report);
    }
    if (batch.length < want || fresh < batch.length) break;
  }
  return report;
}

async function sweepOne(
  deps: QueueDeps,
  family: SweptFamily,
  one: (record: OwnedRecord) => Promise<Outcome>,
  record: OwnedRecord,
  report: SweepReport,
): Promise<void> {
  const owned = deps.stores.ownership;
  const outcome = await one(record).catch((err: unknown): Outcome => {
    deps.log.warn(
      { [family]: record.id, err: (err as Error).message },
      `${family} sweep: not settled this time`,
    );
    return { kind: 'failed' };
  });
  if (outcome.kind !== 'failed') report.checked++;
  else report.failed++;
  if (outcome.kind === 'finished' && outcome.costUsd !== undefined) {
    report.charged++;
    report.costUsd += outcome.costUsd;
  }
  await owned.swept(record, outcome.kind === 'finished' || outcome.kind === 'gone');
}

/** The deployment holding the record's work, if it is still configured. */
export function holderOf(snapshot: Snapshot, record: OwnedRecord): Deployment | undefined {
  return snapshot.models.get(record.model)?.deployments.find((d) => d.name === record.deployment);
}

/** The budget of the key that started the work, if it still has one. */
export function budgetOf(snapshot: Snapshot, record: OwnedRecord): BudgetLimit | undefined {
  const key = [...snapshot.keys.values()].find((k) => k.id === record.keyId && k.tenant === record.tenant);
  return key?.spec.budget;
}

/** A bounded read on the holder, outside the router. */
export function sweepCall(deps: SweepDeps, holder: Deployment, now: number): CallContext {
  return {
    upstream: deps.upstream,
    adapter: deps.adapters[holder.provider],
    deployment: holder,
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    deadline: now + READ_TIMEOUT_MS,
  };
}

/** Counts a settlement the store refused (the work stays queued), then fails the record's sweep. */
export function settlementFailed(deps: SweepDeps): (err: unknown) => never {
  return (err) => {
    deps.metrics.accountingFailures.inc({ operation: 'settlement' });
    throw err;
  };
}

/** What a read would have recorded: a usage record and the spend metrics. */
export async function recordSpend(
  deps: SweepDeps,
  record: OwnedRecord,
  holder: Deployment,
  spent: { endpoint: UsageEndpoint; costUsd: number; prompt_tokens: number; completion_tokens: number },
  now: number,
): Promise<void> {
  const { endpoint, costUsd, prompt_tokens: prompt, completion_tokens: completion } = spent;
  const rec: UsageRecord = {
    id: `${record.family}-sweep:${record.id}`,
    at: now,
    tenant: record.tenant,
    keyId: record.keyId,
    endpoint,
    requestedModel: record.model,
    model: holder.model,
    deployment: holder.name,
    provider: holder.provider,
    euResident: holder.euResident,
    status: 200,
    errorType: undefined,
    stream: false,
    attempts: 1,
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    costUsd,
    latencyMs: 0,
    cache: undefined,
    guardrails: undefined,
    compression: undefined,
    routing: undefined,
  };
  await deps.stores.usage.record(rec).catch(() => deps.recorder.record(rec));
  deps.metrics.charged(record.tenant, holder.model, holder.provider, costUsd, prompt, completion);
}
