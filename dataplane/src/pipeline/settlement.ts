/**
 * The end of every authenticated request, success or failure, exactly once: settle the
 * budget on the actual cost (or release the hold), correct the token count of the rate
 * limit, write the usage record and count spend. The store calls are written before the
 * answer's last byte; the answer does not wait for their acknowledgement when the gateway
 * tracks settlements in flight (its shutdown waits for them instead). Later calls of this
 * gateway to the store go down the same connection, so they see the charge; a settlement
 * the store cannot take goes to the local journal (replayed once the store is back) just
 * after the answer rather than before it.
 */
import type { Deployment } from '../config/snapshot.ts';
import type { Usage } from '../formats/openai/types.ts';
import type { UsageRecord } from '../accounting/usage.ts';
import type { Metrics } from '../metrics.ts';
import type { BudgetLimit } from '../stores/budget.ts';
import { chargeTarget } from '../stores/charge-target.ts';
import { isStoreUnavailable, type Reservation, type Settler, type Stores } from '../stores/index.ts';
import { chargeableUsd } from '../stores/money.ts';
import type { PendingSettlement } from '../stores/journal/entries.ts';
import type { SettlementJournal } from '../stores/journal/journal.ts';
import type { UsageRecorder } from '../stores/usage/index.ts';
import type { QuotaTicket, RequestContext, SideCall } from './context.ts';
import type { SettlementsInFlight } from './settlements-in-flight.ts';
import { servedModels } from './stream-charge.ts';
import { ticketTokens } from './quota-correction.ts';
import { recordedModel } from './unknown-model.ts';

export interface AccountingDeps {
  stores: Stores;
  metrics: Metrics;
  /** Takes the records the usage store could not take at once, and retries them. */
  recorder: UsageRecorder;
  /** Durable budget settlements while the shared store is down; absent for in-process stores. */
  journal?: SettlementJournal | undefined;
  /** Where unacknowledged settlements wait for shutdown; without it the answer waits for them. */
  settlements?: SettlementsInFlight | undefined;
}

/** One deployment's share of a continued stream. */
export interface OutcomePart {
  deployment: Deployment;
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'>;
  costUsd: number;
}

export interface Outcome {
  status: number;
  errorType?: string | undefined;
  /** The deployment that finished the answer (the usage record names it). */
  deployment?: Deployment | undefined;
  /** Every deployment that contributed, when a stream was continued: spend is counted per part. */
  parts?: readonly OutcomePart[] | undefined;
  attempts?: number | undefined;
  usage?: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | undefined;
  costUsd: number;
  /** A semantic-cache hit: its charge is counted under provider `cache`, whatever (if anything) adapted it. */
  cacheHit?: boolean | undefined;
}

/** What the router hands back about a call: the deployment that served and the attempts made. */
interface RoutedCall {
  deployment: Deployment;
  log: { attempts: number };
}

/**
 * A routed call that answered in full (not a stream): charge `costUsd` for `usage` at the
 * deployment that served. The one-shot endpoints (embeddings, completions, moderations,
 * rerank, media, fine-tuning) all settle this way.
 */
export function settleAnswered(
  deps: AccountingDeps,
  ctx: RequestContext,
  routed: RoutedCall,
  costUsd: number,
  usage?: Outcome['usage'],
): Promise<void> {
  return settle(deps, ctx, {
    status: 200,
    deployment: routed.deployment,
    attempts: routed.log.attempts,
    usage,
    costUsd,
  });
}

/**
 * A deployment's `tpm` window counted admission's estimate for each answer; once the provider
 * has reported usage it counts that instead (each deployment of a continued stream its own
 * part). Not awaited, and a failing store leaves the estimate: the quota fails open.
 */
function correctQuotas(
  stores: Stores,
  tickets: readonly QuotaTicket[],
  outcome: Outcome,
  parts: readonly OutcomePart[] | undefined,
): void {
  const used =
    parts ?? (outcome.deployment ? [{ deployment: outcome.deployment, usage: outcome.usage }] : []);
  ticketTokens(tickets, used).forEach((tokens, i) => {
    if (tokens === undefined) return;
    stores.deploymentQuota.adjust(tickets[i]!.ticket, tokens).catch(() => undefined);
  });
}

/**
 * The outcome with every amount one the stores can book (chargeableUsd): an amount past their
 * ceiling threw there, and the charge, its record and the cost header were lost (the request
 * went free). Booked at the ceiling instead, and logged as the fault it is.
 */
function bookable(ctx: RequestContext, outcome: Outcome): Outcome {
  const booked = (what: string, usd: number): number => {
    const amount = chargeableUsd(usd);
    if (amount !== usd)
      ctx.log.error(
        { what, costUsd: usd, bookedUsd: amount },
        'charge past the stores ceiling; booked at it',
      );
    return amount;
  };
  if (ctx.sideCalls?.some((c) => chargeableUsd(c.costUsd) !== c.costUsd))
    ctx.sideCalls = ctx.sideCalls.map((c) => ({ ...c, costUsd: booked(c.label, c.costUsd) }));
  const costUsd = booked('request', outcome.costUsd);
  return costUsd === outcome.costUsd ? outcome : { ...outcome, costUsd };
}

const RETRY_DELAYS_MS = [1_000, 5_000, 15_000];
const NO_SIDE_CALLS: readonly SideCall[] = [];

export async function settle(deps: AccountingDeps, ctx: RequestContext, reported: Outcome): Promise<void> {
  if (ctx.settled) return;
  ctx.settled = true;
  const outcome = bookable(ctx, reported);
  const prompt = outcome.usage?.prompt_tokens ?? 0;
  const completion = outcome.usage?.completion_tokens ?? 0;
  const parts = outcome.parts && outcome.parts.length > 1 ? outcome.parts : undefined;
  if (ctx.quotaTickets) correctQuotas(deps.stores, ctx.quotaTickets, outcome, parts);
  ctx.served = {
    model: parts ? servedModels(parts) : outcome.deployment?.model,
    deployments: parts ? parts.map((p) => p.deployment.name).join(',') : outcome.deployment?.name,
    costUsd: outcome.costUsd,
  };
  // Calls stages made for the request (state extraction) are the caller's spend too, settled
  // with it, but recorded apart under their own provider label. One made under a hold of its
  // own is charged to that hold; the request's hold takes only the rest.
  const side = ctx.sideCalls ?? NO_SIDE_CALLS;
  const sideUsd = side.length === 0 ? 0 : side.reduce((n, c) => (c.reservation ? n : n + c.costUsd), 0);
  const ownHoldsUsd = side.length === 0 ? 0 : side.reduce((n, c) => (c.reservation ? n + c.costUsd : n), 0);
  const sideTokens =
    side.length === 0 ? 0 : side.reduce((n, c) => n + c.promptTokens + c.completionTokens, 0);
  const rec = requestRecord(ctx, outcome, prompt, completion);
  const costUsd = outcome.costUsd + sideUsd;
  const tokens = prompt + completion + sideTokens;
  const settler = deps.stores.settler;
  const metered = ctx.admission?.reservation !== undefined || ctx.admission?.ticket !== undefined;
  // Every job is on its way to the store once called (the calls write synchronously) and
  // handles its own failures; the counting below does not depend on their answers.
  let stored: Promise<unknown>;
  if (!metered && side.length === 0) {
    // No hold or ticket to settle (the default policy): the record is the only job, alone
    // rather than beside an empty money settlement in a Promise.all.
    stored = writeRecord(deps, ctx, rec);
  } else {
    // With Redis, a metered request's money and record are one script (one round trip).
    const jobs =
      settler && metered
        ? [settleTogether(deps, ctx, settler, costUsd, tokens, rec)]
        : [settleMoney(deps, ctx, costUsd, tokens), writeRecord(deps, ctx, rec)];
    for (const c of side) {
      jobs.push(recordSideCall(deps, ctx, c));
      if (c.reservation) jobs.push(settleBudget(deps, ctx, c.reservation, c.costUsd));
    }
    stored = Promise.all(jobs);
  }
  // Owed: all the jobs settle, the side calls' own holds included (the shutdown logs it).
  if (deps.settlements) deps.settlements.track(stored, costUsd + ownHoldsUsd);
  else await stored;
  for (const c of side)
    deps.metrics.charged(
      ctx.tenant.name,
      c.deployment.model,
      c.label,
      c.costUsd,
      c.promptTokens,
      c.completionTokens,
    );
  countVerdicts(deps, ctx);
  // A continued stream's spend goes to each deployment that did part of the work.
  if (parts) {
    for (const p of parts) {
      const d = p.deployment;
      deps.metrics.charged(
        ctx.tenant.name,
        d.model,
        d.provider,
        p.costUsd,
        p.usage.prompt_tokens,
        p.usage.completion_tokens,
      );
    }
  } else {
    const labels = metricLabels(ctx, outcome);
    if (labels)
      deps.metrics.charged(labels.tenant, labels.model, labels.provider, outcome.costUsd, prompt, completion);
  }
}

/** Who the spend and tokens are booked to; nothing when no model answered (an error before any call). */
function metricLabels(
  ctx: RequestContext,
  outcome: Outcome,
): { tenant: string; model: string; provider: string } | undefined {
  const tenant = ctx.tenant.name;
  if (outcome.cacheHit) return { tenant, model: ctx.usage.requestedModel ?? '', provider: 'cache' };
  if (!outcome.deployment) return undefined;
  return { tenant, model: outcome.deployment.model, provider: outcome.deployment.provider };
}

/** Once per check that fired in this request (a check may report several categories). */
function countVerdicts(deps: AccountingDeps, ctx: RequestContext): void {
  const verdict = ctx.usage.guardrails;
  if (!verdict || verdict.findings.length === 0) return;
  const seen = new Set<string>();
  for (const f of verdict.findings) {
    const action = f.action ?? verdict.action;
    const key = `${f.guardrail}:${action}`;
    if (seen.has(key)) continue;
    seen.add(key);
    deps.metrics.guardrail(f.guardrail, action);
  }
}

/**
 * The money and the record in one step (one Redis round trip). When that fails, each part
 * takes its own path (the journal for the budget, retries for the rate limit, the recorder for
 * the record): every part is idempotent, so one that the failed step did apply is not applied
 * twice.
 */
async function settleTogether(
  deps: AccountingDeps,
  ctx: RequestContext,
  settler: Settler,
  costUsd: number,
  tokens: number,
  rec: UsageRecord,
): Promise<void> {
  const { reservation, ticket } = ctx.admission ?? {};
  try {
    await settler.settle({
      budget: reservation && { reservation, amountUsd: costUsd },
      rate: ticket && { ticket, actualTokens: tokens },
      record: rec,
    });
  } catch (err) {
    deps.metrics.accountingFailures.inc({ operation: 'settlement' });
    ctx.log.warn({ err: (err as Error).message }, 'one-step settlement failed; settling each part alone');
    await Promise.all([settleMoney(deps, ctx, costUsd, tokens), writeRecord(deps, ctx, rec)]);
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
  const jobs: Promise<void>[] = [];
  if (reservation) jobs.push(settleBudget(deps, ctx, reservation, costUsd));
  if (ticket)
    jobs.push(
      withRetries(deps, ctx, 'ratelimit.adjust', () => deps.stores.rateLimiter.adjust(ticket, tokens)),
    );
  await Promise.all(jobs);
}

/**
 * The charge must reach the budget however long the store is down: a settlement it cannot
 * take now goes to the journal (on disk before the answer completes) and is replayed from
 * there.
 */
function settleBudget(
  deps: AccountingDeps,
  ctx: RequestContext,
  reservation: Reservation,
  costUsd: number,
): Promise<void> {
  const job = () =>
    costUsd > 0 ? deps.stores.budgets.settle(reservation, costUsd) : deps.stores.budgets.release(reservation);
  return durably(deps, ctx, 'budget.settle', job, (at) => ({ reservation, amountUsd: costUsd, at }));
}

/**
 * Spend charged without a reservation (a Realtime response whose hold was refused still used
 * tokens), as durable as a settlement: one the store cannot take is journaled as the settle of
 * the reservation the charge makes up (charge-target.ts), under the same id, so the journal's
 * replay applies it once even when the failed call did reach the store. Before, it was logged
 * and lost.
 */
export function chargeUnreserved(
  deps: AccountingDeps,
  ctx: RequestContext,
  budget: BudgetLimit,
  costUsd: number,
): Promise<void> {
  // Past the stores' ceiling it is booked at it (the response's settle() logs that).
  const amountUsd = chargeableUsd(costUsd);
  const req = { tenant: ctx.tenant.name, keyId: ctx.key.id, budget, amountUsd, id: ctx.id };
  return durably(
    deps,
    ctx,
    'budget.charge',
    () => deps.stores.budgets.charge(req),
    (at) => ({ reservation: chargeTarget(req, at), amountUsd, at }),
  );
}

/**
 * A budget job the store cannot take now goes to the journal as `entry` and is replayed from
 * there. Without a journal (in-process stores never fail this way) it is retried in memory.
 */
async function durably(
  deps: AccountingDeps,
  ctx: RequestContext,
  operation: 'budget.settle' | 'budget.charge',
  job: () => Promise<unknown>,
  entry: (at: number) => PendingSettlement,
): Promise<void> {
  const journal = deps.journal;
  if (!journal) return withRetries(deps, ctx, operation, job);
  // The period a charge counts in is the one of its first attempt, as the store would have had it.
  const at = Date.now();
  try {
    await job();
  } catch (err) {
    deps.metrics.accountingFailures.inc({ operation });
    if (!isStoreUnavailable(err)) {
      ctx.log.warn({ operation, err: (err as Error).message }, 'budget settlement refused by the store');
      return;
    }
    try {
      await journal.add(entry(at));
      ctx.log.warn({ operation, err: err.message }, 'budget store unavailable; settlement journaled');
    } catch (diskErr) {
      // Still pending in memory (and so still replayed and still failing new requests closed).
      ctx.log.warn({ operation, err: (diskErr as Error).message }, 'settlement journal write failed');
    }
  }
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

/** A side call's own usage record: `<request id>:<label>`, provider = the label. */
async function recordSideCall(deps: AccountingDeps, ctx: RequestContext, c: SideCall): Promise<void> {
  const rec: UsageRecord = {
    id: `${ctx.id}:${c.label}`,
    at: Date.now(),
    tenant: ctx.tenant.name,
    keyId: ctx.key.id,
    endpoint: 'chat',
    requestedModel: c.deployment.model,
    model: c.deployment.model,
    deployment: c.deployment.name,
    provider: c.label,
    euResident: c.deployment.euResident,
    status: 200,
    errorType: undefined,
    stream: false,
    attempts: 1,
    promptTokens: c.promptTokens,
    completionTokens: c.completionTokens,
    totalTokens: c.promptTokens + c.completionTokens,
    costUsd: c.costUsd,
    latencyMs: 0,
    cache: undefined,
    guardrails: undefined,
    compression: undefined,
    routing: undefined,
  };
  await writeRecord(deps, ctx, rec);
}

async function writeRecord(deps: AccountingDeps, ctx: RequestContext, rec: UsageRecord): Promise<void> {
  try {
    await deps.stores.usage.record(rec);
  } catch (err) {
    deps.metrics.accountingFailures.inc({ operation: 'usage.record' });
    ctx.log.warn({ err: (err as Error).message }, 'usage record deferred');
    deps.recorder.record(rec);
  }
}

/** The request's own usage record. */
function requestRecord(ctx: RequestContext, o: Outcome, prompt: number, completion: number): UsageRecord {
  const d = ctx.usage;
  return {
    id: ctx.id,
    at: Date.now(),
    tenant: ctx.tenant.name,
    keyId: ctx.key.id,
    endpoint: d.endpoint ?? 'chat',
    requestedModel: d.requestedModel ?? '',
    // A name no deployment served is the caller's to choose: one label when the config does not know it.
    model: o.deployment?.model ?? recordedModel(ctx.snapshot, d.requestedModel ?? ''),
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
}
