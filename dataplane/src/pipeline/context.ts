/** What every stage of a request sees: who is calling, on which snapshot, and how to stop. */
import {
  notServedHere,
  type Deployment,
  type KeyRecord,
  type ModelRoute,
  type Snapshot,
  type TenantRecord,
} from '../config/snapshot.ts';
import type { UsageRecord } from '../accounting/usage.ts';
import { GatewayError } from '../errors.ts';
import { estimatePromptTokens } from '../accounting/tokens.ts';
import type { ChatRequest } from '../formats/openai/types.ts';
import type { Admission } from './admission.ts';
import type { Reservation } from '../stores/index.ts';
import type { RateTicket } from '../stores/rate-limiter.ts';
import type { TokenEstimate } from '../router/quota.ts';
import type { TraceContext } from '../telemetry/trace-context.ts';
import type { ClientSignal } from '../router/client-signal.ts';
import type { UnansweredCall } from './unanswered-call.ts';

/** What stages note for the usage record as the request goes. */
export type UsageDraft = Partial<
  Pick<
    UsageRecord,
    'endpoint' | 'requestedModel' | 'stream' | 'cache' | 'guardrails' | 'compression' | 'routing'
  >
>;

/** The slice of the request logger stages use; never given keys or prompt text. */
export interface StageLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ServedSummary {
  model: string | undefined;
  /** Deployment names, comma-separated in order when a stream was continued. */
  deployments: string | undefined;
  costUsd: number;
}

export interface RequestContext {
  /** Gantry's own unique id: usage records, idempotency keys and answer ids derive from it. */
  id: string;
  /** `x-request-id`: the caller's when it sent a sane one (it may repeat), else `id`. */
  requestId: string;
  /** The snapshot this request started on; it finishes on it even if config reloads. */
  snapshot: Snapshot;
  key: KeyRecord;
  tenant: TenantRecord;
  /** Aborted when the client disconnects: every upstream call listens to it. */
  signal: ClientSignal;
  startedAt: number;
  /** Absolute time by which the whole request must be answered. */
  deadline: number;
  /** Request headers, lower-cased (for the per-request opt-outs of later stages). */
  requestHeaders: Readonly<Record<string, string | string[] | undefined>>;
  log: StageLogger;
  /** Response headers stages add (routing, cache, compression); sent with the answer. */
  responseHeaders: Record<string, string>;
  usage: UsageDraft;
  /** Rate-limit ticket and budget reservation, settled exactly once at the end. */
  admission: Admission | undefined;
  settled: boolean;
  /** What served the request and what it cost, once settled (for the request log line and span). */
  served: ServedSummary | undefined;
  /** W3C trace context of the caller, when it sent a valid `traceparent`. */
  trace: TraceContext | undefined;
  /** Headers every upstream call of this request carries (request id, trace context). */
  upstreamHeaders: Readonly<Record<string, string>>;
  /** The prompt's token count, counted once (`promptTokensOf`) and reused by every stage. */
  promptTokens: number | undefined;
  /**
   * Provider calls a stage made on the request's behalf (compression's state extraction):
   * settled with the request, recorded under their own provider label.
   */
  sideCalls?: SideCall[];
  /** The call on the wire upstream, if any: charged when the client leaves it (unanswered-call.ts). */
  unanswered?: UnansweredCall | undefined;
  /**
   * Admission's token estimate (prompt plus output bound), computed on first use: a
   * deployment's `tpm` quota window counts it before each attempt.
   */
  tokenEstimate?: (() => TokenEstimate) | undefined;
  /** Quota window entries of the deployments that answered, corrected to the actual tokens at settlement. */
  quotaTickets?: QuotaTicket[] | undefined;
}

export interface QuotaTicket {
  deployment: string;
  ticket: RateTicket;
}

/** The per-request metering fields of a context. */
export type Metering = Pick<
  RequestContext,
  | 'responseHeaders'
  | 'usage'
  | 'admission'
  | 'settled'
  | 'served'
  | 'promptTokens'
  | 'sideCalls'
  | 'unanswered'
  | 'tokenEstimate'
  | 'quotaTickets'
>;

/**
 * What a new metered request starts from: nothing admitted, settled, served or counted yet.
 * A request made inside another (a RAG query's embedding, a Realtime response) spreads it over
 * its parent so it is admitted, settled and recorded on its own.
 */
export const freshMetering = (): Metering => ({
  responseHeaders: {},
  usage: {},
  admission: undefined,
  settled: false,
  served: undefined,
  promptTokens: undefined,
  sideCalls: undefined,
  unanswered: undefined,
  tokenEstimate: undefined,
  quotaTickets: undefined,
});

/** A provider call made for a stage, not for the answer. */
export interface SideCall {
  /** Usage-record id suffix and provider label. */
  label: 'compression';
  deployment: Deployment;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  /** The call's own budget hold, settled with `costUsd` beside the request's; none for a key without a budget. */
  reservation?: Reservation | undefined;
}

/**
 * The models a request for `model` may be served by: itself, plus, when given, the models
 * difficulty routing may pick, and each one's fallbacks the key may use (the router's chain for
 * whichever model the request is forwarded as: a routed request fails over to the level
 * model's fallbacks, not the requested one's).
 */
export function reachableRoutes(
  ctx: Pick<RequestContext, 'key' | 'tenant' | 'snapshot'>,
  model: string,
  routedModels: readonly string[] = [],
): ModelRoute[] {
  const names = new Set<string>();
  for (const served of [model, ...routedModels]) {
    names.add(served);
    for (const fallback of ctx.snapshot.models.get(served)?.fallbacks ?? []) names.add(fallback);
  }
  const out: ModelRoute[] = [];
  for (const name of names) {
    const r = ctx.snapshot.models.get(name);
    if (r && mayUse(ctx, name)) out.push(r);
  }
  return out;
}

/** Counting tokens is the dearest step of admission: do it once per request. */
export function promptTokensOf(ctx: Pick<RequestContext, 'promptTokens'>, req: ChatRequest): number {
  return (ctx.promptTokens ??= estimatePromptTokens(req));
}

/** The model's route when the caller may use it; else unknownModel's answer. */
export function accessibleRoute(
  ctx: Pick<RequestContext, 'key' | 'tenant' | 'snapshot'>,
  model: string,
): ModelRoute {
  const route = ctx.snapshot.models.get(model);
  if (!route || !mayUse(ctx, model)) throw unknownModel(ctx, model);
  return route;
}

/**
 * The answer for a model the caller cannot be served: 404, except for a model the caller's
 * lists allow that this pod left out (its deployments' variable unset here), which is a 503
 * naming it: the model exists, another pod may serve it, and a 404 (or a built-in stand-in)
 * would hide a pod misconfiguration. The variable's name stays in /readyz and the logs; a
 * caller cannot act on it.
 */
export function unknownModel(
  ctx: Pick<RequestContext, 'key' | 'tenant' | 'snapshot'>,
  model: string,
): GatewayError {
  if (notServedHere(ctx.snapshot, model) && listed(ctx, model))
    return new GatewayError(
      'model_unavailable',
      `model ${model} is configured but not served in this pod: its deployments are left out here (their credential is not set in this pod)`,
      { param: 'model', refusedModel: model },
    );
  return new GatewayError('model_not_found', `model ${model} does not exist or is not enabled for this key`, {
    param: 'model',
    refusedModel: model,
  });
}

/** The tenant's and key's allow lists, whatever the snapshot serves. */
const listed = (ctx: Pick<RequestContext, 'key' | 'tenant'>, model: string): boolean =>
  (ctx.tenant.models === undefined || ctx.tenant.models.has(model)) &&
  (ctx.key.models === undefined || ctx.key.models.has(model));

/** Model access = tenant allow list ∩ key restriction. */
export function mayUse(ctx: Pick<RequestContext, 'key' | 'tenant' | 'snapshot'>, model: string): boolean {
  if (!ctx.snapshot.models.has(model)) return false;
  if (ctx.tenant.models !== undefined && !ctx.tenant.models.has(model)) return false;
  return ctx.key.models === undefined || ctx.key.models.has(model);
}
