/**
 * The end of every authenticated request, success or failure, exactly once: settle the
 * budget on the actual cost (or release the hold), correct the token count of the rate
 * limit, write the usage record and count spend. Runs before the answer's last byte, so a
 * caller that has its answer also has its charge on record.
 */
import type { Deployment } from '../config/snapshot.ts';
import type { Usage } from '../formats/openai/types.ts';
import type { UsageRecord } from '../accounting/usage.ts';
import type { Metrics } from '../metrics.ts';
import type { Stores } from '../stores/index.ts';
import type { UsageRecorder } from '../stores/usage/index.ts';
import type { RequestContext } from './context.ts';

export interface AccountingDeps {
  stores: Stores;
  metrics: Metrics;
  /** Takes the records the usage store could not take at once, and retries them. */
  recorder: UsageRecorder;
}

export interface Outcome {
  status: number;
  errorType?: string | undefined;
  deployment?: Deployment | undefined;
  attempts?: number | undefined;
  usage?: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | undefined;
  costUsd: number;
}

const RETRY_DELAYS_MS = [1_000, 5_000, 15_000];

export async function settle(deps: AccountingDeps, ctx: RequestContext, outcome: Outcome): Promise<void> {
  if (ctx.settled) return;
  ctx.settled = true;
  const prompt = outcome.usage?.prompt_tokens ?? 0;
  const completion = outcome.usage?.completion_tokens ?? 0;
  await Promise.all([
    settleMoney(deps, ctx, outcome.costUsd, prompt + completion),
    record(deps, ctx, outcome, prompt, completion),
  ]);
  if (outcome.deployment) {
    const labels = {
      tenant: ctx.tenant.name,
      model: outcome.deployment.model,
      provider: outcome.deployment.provider,
    };
    if (outcome.costUsd > 0) deps.metrics.spend.inc(labels, outcome.costUsd);
    if (prompt > 0) deps.metrics.tokens.inc({ ...labels, kind: 'prompt' }, prompt);
    if (completion > 0) deps.metrics.tokens.inc({ ...labels, kind: 'completion' }, completion);
  }
}

async function settleMoney(
  deps: AccountingDeps,
  ctx: RequestContext,
  costUsd: number,
  tokens: number,
): Promise<void> {
  const admission = ctx.admission;
  if (!admission) return;
  const { reservation, ticket } = admission;
  const jobs: [string, () => Promise<unknown>][] = [];
  if (reservation) {
    jobs.push([
      'budget.settle',
      () =>
        costUsd > 0
          ? deps.stores.budgets.settle(reservation, costUsd)
          : deps.stores.budgets.release(reservation),
    ]);
  }
  if (ticket) jobs.push(['ratelimit.adjust', () => deps.stores.rateLimiter.adjust(ticket, tokens)]);
  await Promise.all(jobs.map(([operation, job]) => withRetries(deps, ctx, operation, job)));
}

/**
 * Settling is idempotent, so a store that hiccups is simply asked again later; the answer
 * is not held back for it. A hold that is never settled expires with its reservation.
 */
async function withRetries(
  deps: AccountingDeps,
  ctx: RequestContext,
  operation: string,
  job: () => Promise<unknown>,
): Promise<void> {
  try {
    await job();
  } catch (err) {
    deps.metrics.accountingFailures.inc({ operation });
    ctx.log.warn({ operation, err: (err as Error).message }, 'settlement deferred');
    void retryLater(deps, ctx, operation, job, 0);
  }
}

async function retryLater(
  deps: AccountingDeps,
  ctx: RequestContext,
  operation: string,
  job: () => Promise<unknown>,
  attempt: number,
): Promise<void> {
  const delay = RETRY_DELAYS_MS[attempt];
  if (delay === undefined) {
    ctx.log.warn({ operation }, 'settlement abandoned after retries');
    return;
  }
  await new Promise((r) => setTimeout(r, delay).unref());
  try {
    await job();
  } catch {
    deps.metrics.accountingFailures.inc({ operation });
    await retryLater(deps, ctx, operation, job, attempt + 1);
  }
}

async function record(
  deps: AccountingDeps,
  ctx: RequestContext,
  o: Outcome,
  prompt: number,
  completion: number,
) {
  const d = ctx.usage;
  const rec: UsageRecord = {
    id: ctx.id,
    at: Date.now(),
    tenant: ctx.tenant.name,
    keyId: ctx.key.id,
    endpoint: d.endpoint ?? 'chat',
    requestedModel: d.requestedModel ?? '',
    model: o.deployment?.model ?? d.requestedModel ?? '',
    deployment: o.deployment?.name,
    provider: o.deployment?.provider,
    euResident: o.deployment?.euResident ?? false,
    status: o.status,
    errorType: o.errorType,
    stream: d.stream ?? false,
    attempts: o.attempts ?? 0,
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    costUsd: o.costUsd,
    latencyMs: Date.now() - ctx.startedAt,
    cache: d.cache,
    guardrails: d.guardrails,
    compression: d.compression,
    routing: d.routing,
  };
  try {
    await deps.stores.usage.record(rec);
  } catch (err) {
    deps.metrics.accountingFailures.inc({ operation: 'usage.record' });
    ctx.log.warn({ err: (err as Error).message }, 'usage record deferred');
    deps.recorder.record(rec);
  }
}
