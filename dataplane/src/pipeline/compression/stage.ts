/**
 * The compression stage's shell: the pure decisions of this folder, one extraction call
 * through Gantry's own router, the CCR store. Never fails the request: whatever goes wrong
 * becomes a fallback reason and the request passes through unchanged.
 */
import { dearestPricing } from '../../accounting/estimate.ts';
import { RequestHeaders } from '../../brand.ts';
import type { ChatMessage, ChatRequest } from '../../formats/openai/types.ts';
import type { Metrics } from '../../metrics.ts';
import type { Router } from '../../router/router.ts';
import { chatCall } from '../../router/calls.ts';
import type { RequestContext } from '../context.ts';
import { callContext, type ForwardDeps } from '../forward.ts';
import type { Stores } from '../../stores/index.ts';
import type { CcrStore } from './ccr/types.ts';
import { extractionUsage } from './extraction-usage.ts';
import { holdExtraction } from './hold.ts';
import { assemble, worthIt, type Plan } from './decide.ts';
import { extractFacts } from './facts.ts';
import { setStateHeaders, type StateOutcome } from './headers.ts';
import { messageTokens } from './measure.ts';
import { prepareCompression } from './prepare.ts';
import { extractionModelFor } from './model.ts';
import { resolveCompressionPolicy } from './policy.ts';
import { TUNING } from './profile.ts';
import { contentId, entriesToFile, planRecall } from './recall.ts';
import { endUserOf, partitionKey, scopeOf, sessionOf } from './session.ts';
import { mergeFacts, parseState, recoveredMessage, stateMessage, type ExtractedState } from './state.ts';
import { messageText } from './text.ts';
import type { Fallback, StepFormat } from './types.ts';

export interface CompressionDeps extends ForwardDeps {
  router: Router;
  metrics: Metrics;
  ccr: CcrStore;
  /** The extraction's own budget hold (hold.ts). */
  stores: Pick<Stores, 'budgets'>;
}

/** The provider label extraction spend is recorded under. */
export const EXTRACTION_LABEL = 'compression' as const;
/** An extraction slower than this is abandoned (`extraction_failed`); the answer is what matters. */
export const EXTRACTION_TIMEOUT_MS = 30_000;
/** Recovered content may use at most this share of the original tokens. */
export const MAX_RECOVERED_SHARE = 0.2;

type Extracted =
  | { ok: true; state: ExtractedState; promptTokens: number; completionTokens: number; latencyMs: number }
  | { ok: false; promptTokens: number; completionTokens: number; latencyMs: number; problem: string };

/** Runs SPEC.md's compression on a chat request; returns the request to forward. */
export async function compressConversation(
  deps: CompressionDeps,
  ctx: RequestContext,
  req: ChatRequest,
  format: StepFormat,
): Promise<ChatRequest> {
  const policy = resolveCompressionPolicy(ctx.tenant.spec);
  if (!policy.enabled || ctx.requestHeaders[RequestHeaders.state] === 'false') return req;

  const model = extractionModelFor(ctx.snapshot, ctx.tenant, policy, req.model);
  const { plan, measured, extraction } = prepareCompression(req, policy, format, model);
  if (plan.kind === 'pass' || !extraction)
    return passThrough(
      deps,
      ctx,
      req,
      plan.originalTokens,
      plan.kind === 'pass' ? plan.fallback : { reason: 'no_model' },
    );

  const history = plan.zones.history.map((i) => measured[i]!);
  const extracted = await extract(deps, ctx, plan.extractionModel, extraction);
  const calls = {
    promptTokens: extracted.promptTokens,
    completionTokens: extracted.completionTokens,
    latencyMs: extracted.latencyMs,
  };
  if (!extracted.ok) {
    ctx.log.warn({ problem: extracted.problem, model: plan.extractionModel }, 'state extraction failed');
    return passThrough(deps, ctx, req, plan.originalTokens, { reason: 'extraction_failed' }, calls);
  }

  const state = mergeFacts(extracted.state, extractFacts(history.map((h) => h.message)));
  const inserted: ChatMessage[] = [stateMessage(state)];
  const recovered = await recover(deps, ctx, req, plan);
  if (recovered) inserted.push(recovered);
  const messages = assemble(req.messages, plan.zones, inserted);
  const tokens = plan.keptTokens + inserted.reduce((n, m) => n + messageTokens(m), 0);
  if (!worthIt(plan.originalTokens, tokens))
    return passThrough(deps, ctx, req, plan.originalTokens, { reason: 'no_savings' }, calls, state);

  note(deps, ctx, req, {
    mode: 'state',
    originalTokens: plan.originalTokens,
    tokens,
    ...extractionFields(calls),
    intent: state.intent,
    constraints: state.active_constraints,
    fallback: undefined,
  });
  return { ...req, messages };
}

const extractionFields = (
  c: { promptTokens: number; completionTokens: number; latencyMs: number } | undefined,
) => ({
  latencyMs: c?.latencyMs ?? 0,
  extractionPromptTokens: c?.promptTokens ?? 0,
  extractionCompletionTokens: c?.completionTokens ?? 0,
});

function passThrough(
  deps: CompressionDeps,
  ctx: RequestContext,
  req: ChatRequest,
  originalTokens: number,
  fallback: Fallback,
  calls?: { promptTokens: number; completionTokens: number; latencyMs: number },
  state?: ExtractedState,
): ChatRequest {
  note(deps, ctx, req, {
    mode: 'none',
    originalTokens,
    tokens: originalTokens,
    ...extractionFields(calls),
    intent: state?.intent,
    constraints: state?.active_constraints,
    fallback,
  });
  return req;
}

/** Headers, the usage record's summary and the metrics of one outcome. */
function note(deps: CompressionDeps, ctx: RequestContext, req: ChatRequest, o: StateOutcome): void {
  setStateHeaders(ctx.responseHeaders, o);
  deps.metrics.compression(o.mode, o.fallback?.reason ?? 'none');
  if (o.mode !== 'state') return;
  const saved = o.originalTokens - o.tokens;
  const route = ctx.snapshot.models.get(req.model);
  const pricing = route ? dearestPricing(route) : undefined;
  const grossUsd = pricing ? (saved * pricing.inputPerMillionTokens) / 1_000_000 : 0;
  const spentUsd = (ctx.sideCalls ?? [])
    .filter((c) => c.label === EXTRACTION_LABEL)
    .reduce((n, c) => n + c.costUsd, 0);
  const savedUsd = Math.round((grossUsd - spentUsd) * 1_000_000) / 1_000_000;
  ctx.usage.compression = {
    ratio: o.originalTokens > 0 ? 1 - o.tokens / o.originalTokens : 0,
    originalTokens: o.originalTokens,
    tokens: o.tokens,
    savedUsd,
  };
  const labels = { tenant: ctx.tenant.name, key: ctx.key.id, model: req.model };
  deps.metrics.compressionOriginalTokens.inc(labels, o.originalTokens);
  deps.metrics.compressionSavedTokens.inc(labels, saved);
}

/**
 * One extraction through the router, under a budget hold of its own (none, no call); its spend
 * is on the request whatever the answer, settled against that hold.
 */
async function extract(
  deps: CompressionDeps,
  ctx: RequestContext,
  model: string,
  xreq: ChatRequest,
): Promise<Extracted> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const hold = await holdExtraction(deps.stores, ctx, model, xreq);
  if (hold.kind === 'refused')
    return { ok: false, problem: hold.problem, promptTokens: 0, completionTokens: 0, latencyMs: elapsed() };
  const reservation = hold.kind === 'held' ? hold.reservation : undefined;
  const deadline = Math.min(ctx.deadline, Date.now() + EXTRACTION_TIMEOUT_MS);
  let spent = false;
  try {
    const routed = await deps.router.execute(
      {
        model,
        snapshot: ctx.snapshot,
        allowed: (m) => ctx.tenant.models === undefined || ctx.tenant.models.has(m),
        needs: ['chat'],
        signal: ctx.signal,
        deadline,
      },
      (d) => chatCall({ ...callContext(deps, ctx, d), deadline }, xreq),
    );
    const { usage, costUsd } = extractionUsage(xreq, routed.deployment, routed.value);
    const spend = {
      label: EXTRACTION_LABEL,
      deployment: routed.deployment,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      costUsd,
      reservation,
    };
    (ctx.sideCalls ??= []).push(spend);
    spent = true;
    const counts = {
      promptTokens: spend.promptTokens,
      completionTokens: spend.completionTokens,
      latencyMs: elapsed(),
    };
    const parsed = parseState(routed.value.choices[0]?.message.content ?? '');
    return parsed.ok
      ? { ok: true, state: parsed.state, ...counts }
      : { ok: false, problem: parsed.problem, ...counts };
  } catch (err) {
    // No answer, no charge: the hold goes now (one that cannot be released lapses with its TTL).
    if (reservation && !spent) await deps.stores.budgets.release(reservation).catch(() => undefined);
    return {
      ok: false,
      problem: (err as Error).message,
      promptTokens: 0,
      completionTokens: 0,
      latencyMs: elapsed(),
    };
  }
}

/**
 * Files what compression removed under the request's scope and brings back what the kept
 * conversation refers to again. Fails open: without a scope or a store, nothing comes back.
 */
async function recover(
  deps: CompressionDeps,
  ctx: RequestContext,
  req: ChatRequest,
  plan: Extract<Plan, { kind: 'compress' }>,
): Promise<ChatMessage | undefined> {
  const session = sessionOf(ctx.requestHeaders[RequestHeaders.session], req.messages, endUserOf(req));
  const scope = scopeOf(ctx.tenant.name, ctx.key.hash.toString('hex'), session);
  if (!scope) return undefined;
  const partition = partitionKey(scope);
  const tuning = TUNING[plan.profile];
  try {
    const turn = await deps.ccr.openTurn(partition);
    const filed = entriesToFile(req.messages, plan.zones.history, tuning, Date.now());
    await deps.ccr.file(partition, filed);
    const keptIdx = [...plan.zones.recent, ...plan.zones.last];
    const keptText = keptIdx.map((i) => messageText(req.messages[i]!)).join('\n');
    const carried = new Set(keptIdx.map((i) => contentId(messageText(req.messages[i]!))));
    const index = new Map(turn.entries.map((e) => [e.id, e]));
    for (const f of filed) index.set(f.id, { ...f, mentionedTurn: index.get(f.id)?.mentionedTurn });
    const { inject, mentioned } = planRecall([...index.values()], turn.turn, keptText, carried);
    const entries = await deps.ccr.recall(partition, inject, mentioned, turn.turn);
    // Most wanted first within the allowance, then shown in filing order.
    let left = MAX_RECOVERED_SHARE * plan.originalTokens;
    const wanted = new Set(
      entries
        .filter((e) => {
          const t = Math.ceil(e.content.length / 4);
          if (t > left) return false;
          left -= t;
          return true;
        })
        .map((e) => e.id),
    );
    const order = [...index.keys()];
    const chosen = entries
      .filter((e) => wanted.has(e.id))
      .sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
    deps.metrics.ccrRecalls.inc(chosen.length);
    return chosen.length > 0 ? recoveredMessage(chosen) : undefined;
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message }, 'context recovery unavailable');
    return undefined;
  }
}
