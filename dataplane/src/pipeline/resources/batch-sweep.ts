/**
 * The settlement sweep: a batch that finishes upstream is charged even when nobody reads it
 * through Gantry again. Each tick takes the batches least recently looked at from the
 * ownership store's queue (shared by the pods with Redis), reads each from its deployment,
 * adopts its output files, and settles a finished one as a read does (`chargeThenClaim`: the
 * charge first, idempotent by the batch, then the once-only claim), so a sweep on one pod and a
 * client read on another charge it once, and a charge the store refuses is retried by the next
 * tick or read, not remembered in this process.
 *
 * The sweep calls deployments directly, never through the router: nothing it meets (a slow
 * provider, a local error) counts against a deployment's health or trips its breaker.
 */
import type { ProviderKind } from '@gantry/crds';
import type { Deployment, Snapshot } from '../../config/snapshot.ts';
import type { UsageRecord } from '../../accounting/usage.ts';
import type { Metrics } from '../../metrics.ts';
import type { ProviderAdapter } from '../../providers/types.ts';
import { readJsonObject, type CallContext } from '../../router/calls.ts';
import { UpstreamFailure, type UpstreamClient } from '../../router/upstream.ts';
import type { BudgetLimit } from '../../stores/budget.ts';
import type { Stores } from '../../stores/index.ts';
import type { OwnedRecord } from '../../stores/ownership/types.ts';
import type { UsageRecorder } from '../../stores/usage/index.ts';
import { batchCostUsd, finishedBatchUsage, isFinishedBatch } from './batch.ts';
import { adoptOutputFiles, heldBatch } from './batches.ts';
import { chargeThenClaim } from './held-work.ts';
import { FAMILY } from './families.ts';
import { objectPath } from './owned.ts';
import { sendResource } from './proxy.ts';

/** Default pause between sweeps; `GANTRY_BATCH_SWEEP_MS` (0 turns the sweep off). */
export const DEFAULT_BATCH_SWEEP_MS = 60_000;
/** Batches looked at per sweep, so one tick stays a bounded amount of upstream reads. */
export const DEFAULT_SWEEP_LIMIT = 200;
/** One upstream read may take this long. */
const READ_TIMEOUT_MS = 30_000;

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
  /** Batches read upstream. */
  checked: number;
  /** Finished batches this sweep charged (the others were charged by a read, or had no usage). */
  charged: number;
  costUsd: number;
  /** Reads or settlements that failed; those batches stay queued for a later sweep. */
  failed: number;
}

export interface BatchSweeper {
  /** One sweep; a tick while one runs waits for it instead of starting another. */
  tick(): Promise<SweepReport>;
  /** Resolves once no sweep is running (shutdown waits for it). */
  idle(): Promise<void>;
}

export function batchSweeper(deps: SweepDeps, limit = DEFAULT_SWEEP_LIMIT): BatchSweeper {
  let running: Promise<SweepReport> | undefined;
  return {
    tick() {
      running ??= sweepBatches(deps, limit).finally(() => (running = undefined));
      return running;
    },
    async idle() {
      await running?.catch(() => undefined);
    },
  };
}

type Outcome =
  { kind: 'running' } | { kind: 'gone' } | { kind: 'failed' } | { kind: 'finished'; costUsd?: number };

async function sweepBatches(deps: SweepDeps, limit: number): Promise<SweepReport> {
  const report: SweepReport = { checked: 0, charged: 0, costUsd: 0, failed: 0 };
  const owned = deps.stores.ownership;
  for (const record of await owned.unsettled(limit)) {
    const outcome = await sweepOne(deps, record).catch((err: unknown): Outcome => {
      deps.log.warn({ batch: record.id, err: (err as Error).message }, 'batch sweep: not settled this time');
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
  return report;
}

function holderOf(snapshot: Snapshot, record: OwnedRecord): Deployment | undefined {
  return snapshot.models.get(record.model)?.deployments.find((d) => d.name === record.deployment);
}

async function sweepOne(deps: SweepDeps, record: OwnedRecord): Promise<Outcome> {
  const snapshot = deps.snapshot();
  const holder = holderOf(snapshot, record);
  // A deployment taken out of the config may come back; its batches wait in the queue.
  if (!holder) return { kind: 'failed' };
  const now = deps.now?.() ?? Date.now();
  const call: CallContext = {
    upstream: deps.upstream,
    adapter: deps.adapters[holder.provider],
    deployment: holder,
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    deadline: now + READ_TIMEOUT_MS,
  };
  let object: Record<string, unknown>;
  try {
    const res = await sendResource(
      call,
      'GET',
      objectPath(FAMILY.batch, record.id),
      { kind: 'none' },
      FAMILY.batch.upstreamHeaders,
    );
    object = await readJsonObject(call, res);
  } catch (err) {
    if (err instanceof UpstreamFailure && err.upstream.status === 404) {
      await deps.stores.ownership.delete(record);
      return { kind: 'gone' };
    }
    throw err;
  }
  await adoptOutputFiles(deps, record, object);
  if (!isFinishedBatch(object)) return { kind: 'running' };
  const usage = finishedBatchUsage(object, holder);
  const costUsd = usage ? batchCostUsd(holder.pricing, usage) : 0;
  // Settled even without usage: its hold is released then (a charge of nothing). Charged first,
  // idempotently by the batch, then claimed, as a read settles it: a store that fails leaves the
  // batch unclaimed and queued, for the next tick or a read, with nothing kept in this process.
  const settled = await chargeThenClaim(
    deps.stores,
    budgetOf(snapshot, record),
    heldBatch(record),
    costUsd,
  ).catch((err: unknown) => {
    deps.metrics.accountingFailures.inc({ operation: 'budget.charge' });
    throw err;
  });
  if (!settled || !usage) return { kind: 'finished' };
  await recordSpend(deps, record, holder, { costUsd, ...usage }, now);
  deps.log.info(
    { batch: record.id, tenant: record.tenant, costUsd, ...usage },
    'batch finished; charged by the sweep',
  );
  return { kind: 'finished', costUsd };
}

/** The budget of the key that started the work, if it still has one. */
function budgetOf(snapshot: Snapshot, record: OwnedRecord): BudgetLimit | undefined {
  const key = [...snapshot.keys.values()].find((k) => k.id === record.keyId && k.tenant === record.tenant);
  return key?.spec.budget;
}

/** What a read would have recorded: a usage record and the spend metrics. */
async function recordSpend(
  deps: SweepDeps,
  record: OwnedRecord,
  holder: Deployment,
  spent: { costUsd: number; prompt_tokens: number; completion_tokens: number },
  now: number,
): Promise<void> {
  const { costUsd, prompt_tokens: prompt, completion_tokens: completion } = spent;
  const rec: UsageRecord = {
    id: `batch-sweep:${record.id}`,
    at: now,
    tenant: record.tenant,
    keyId: record.keyId,
    endpoint: 'batches',
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
