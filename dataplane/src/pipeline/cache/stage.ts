/**
 * The semantic-cache stage: first the exact tier (the same request again, found by digest
 * without embedding: a DIRECT hit at score 1), then embed the query and its context, find the
 * nearest earlier answer in the request's partition, and choose DIRECT, REUSE, TWEAK or MISS
 * by DualScore. Fails open: an embedder, Milvus or Redis that cannot answer makes the request
 * a plain MISS (an exact tier that cannot answer falls through to the semantic one).
 */
import type { Snapshot } from '../../config/snapshot.ts';
import type { ChatCompletion, ChatRequest } from '../../formats/openai/types.ts';
import { dearestPricing } from '../../accounting/estimate.ts';
import type { Metrics } from '../../metrics.ts';
import type { CacheEntry, CacheEntryStore } from '../../stores/cache-entries/types.ts';
import type { VectorIndex } from '../../stores/vectors/types.ts';
import { RequestHeaders, ResponseHeaders } from '../../brand.ts';
import { mayUse, promptTokensOf, type RequestContext } from '../context.ts';
import { createBuiltinEmbedder } from './builtin-embedder.ts';
import { createMinilmEmbedder, MINILM_EMBEDDING_MODEL, type MinilmEmbedder } from './minilm-embedder.ts';
import { callCostUsd, hitSaving, tweakWorthIt, type HitSaving, type TokenCount } from './economics.ts';
import { embedForCache, type CacheVectors, type Embedder } from './embedder.ts';
import { buildCacheEntry, entryServes, isCut, isStorable, takesExactDigest } from './entry.ts';
import { exactDigest } from './exact.ts';
import { cacheKeyParts, type CacheKeyParts, type CacheScope } from './key.ts';
import { questionFacts, questionsConflict } from './lookalike.ts';
import { operandsSwapped } from './order-guard.ts';
import { createModelEmbedder } from './model-embedder.ts';
import {
  BUILTIN_EMBEDDING_MODEL,
  resolveCachePolicy,
  tenantCacheEnabled,
  type Band,
  type CacheFormat,
  type ResolvedCachePolicy,
} from './policy.ts';
import type { RecentCacheMetrics } from './recent.ts';
import { chooseBand, entryVector, probeVector } from './score.ts';
import { skipReason } from './skip.ts';
import { estimateTweakTokens, tweakRequest } from './tweak.ts';
import { LogSampler } from '../../server/log-sampler.ts';

export interface CacheDeps {
  vectors: VectorIndex;
  entries: CacheEntryStore;
  recent: RecentCacheMetrics;
  metrics: Metrics;
  /** Embeds through Gantry's own router with an embeddings ModelDeployment. */
  embedVia: (snapshot: Snapshot, model: string, texts: string[]) => Promise<number[][]>;
  /**
   * The minilm embedder, made by the gateway from the folder its start-up check read (its env's
   * GANTRY_MINILM_DIR); without one, a process-wide embedder on process.env's folder.
   */
  minilm?: Embedder;
}

export type CacheLookup =
  | {
      kind: 'hit';
      band: Exclude<Band, 'MISS'>;
      score: number;
      entry: CacheEntry;
      /** The answer to serve: the entry's, or its adaptation for TWEAK. */
      response: ChatCompletion;
      saving: HitSaving;
      /** What the caller pays: the full call the hit replaced. */
      chargeUsd: number;
      /** TWEAK: the adaptation request, for the caller to run through the router. */
      tweak?: ChatRequest;
      policy: ResolvedCachePolicy;
    }
  | { kind: 'miss'; store: ((response: ChatCompletion) => Promise<void>) | undefined };

const SEARCH_K = 4;
const builtin = createBuiltinEmbedder();
// Loaded on the first request of a tenant that picks it: tenants on other embedders never pay.
let processMinilm: MinilmEmbedder | undefined;
const modelEmbedders = new WeakMap<Snapshot, Map<string, Embedder>>();

function embedderFor(deps: CacheDeps, policy: ResolvedCachePolicy, snapshot: Snapshot): Embedder {
  if (policy.embeddingModel === BUILTIN_EMBEDDING_MODEL) return builtin;
  if (policy.embeddingModel === MINILM_EMBEDDING_MODEL)
    return deps.minilm ?? (processMinilm ??= createMinilmEmbedder());
  let bySnapshot = modelEmbedders.get(snapshot);
  if (!bySnapshot) modelEmbedders.set(snapshot, (bySnapshot = new Map()));
  let e = bySnapshot.get(policy.embeddingModel);
  if (!e) {
    const model = policy.embeddingModel;
    e = createModelEmbedder({ model, call: (texts) => deps.embedVia(snapshot, model, texts) });
    bySnapshot.set(model, e);
  }
  return e;
}

export async function lookupCache(
  deps: CacheDeps,
  ctx: RequestContext,
  req: ChatRequest,
  format: CacheFormat,
): Promise<CacheLookup> {
  const started = Date.now();
  const path = format === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
  const skip = skipReason(req, ctx.requestHeaders, tenantCacheEnabled(ctx.tenant.spec), {
    method: 'POST',
    path,
  });
  const note = (
    band: Band | 'SKIP',
    score: number | null,
    tokensSaved = 0,
    savedUsd = 0,
    creditedUsd = 0,
    exact = false,
  ): void => {
    const now = Date.now();
    const latencyMs = now - started;
    deps.metrics.cacheLookup(band);
    deps.recent.push({
      atMs: now,
      requestId: ctx.id,
      tenant: ctx.tenant.name,
      model: req.model,
      band,
      score,
      tokensSaved,
      latencyMs,
      skipReason: skip.reason,
      exact,
    });
    ctx.usage.cache = {
      band,
      score: score ?? undefined,
      tokensSaved,
      savedUsd,
      creditedUsd,
      latencyMs,
      ...(exact && { exact }),
    };
    if (band === 'SKIP') return;
    ctx.responseHeaders[ResponseHeaders.cacheStatus] = band;
    if (score !== null) ctx.responseHeaders[ResponseHeaders.cacheScore] = score.toFixed(4);
    if (band !== 'MISS') ctx.responseHeaders[ResponseHeaders.cacheTokensSaved] = String(tokensSaved);
  };
  if (!skip.lookup && !skip.store) {
    note('SKIP', null);
    return { kind: 'miss', store: undefined };
  }

  const policy = resolveCachePolicy(ctx.tenant.cache);
  const embedder = embedderFor(deps, policy, ctx.snapshot);
  const scope: CacheScope = { tenant: ctx.tenant.name, format, embedder: embedder.id };
  const parts = cacheKeyParts(req, scope);
  if (!parts) {
    note('SKIP', null);
    return { kind: 'miss', store: undefined };
  }
  const digest = exactDigest(parts);
  if (skip.lookup) {
    const exact = await failOpen(deps, ctx, 'exact', () => exactEntry(deps, ctx, parts, digest, req));
    // Score 1 is DIRECT under any valid thresholds (at most 1); REUSE serves the same answer.
    const band = chooseBand(1, policy.thresholds);
    if (exact && (band === 'DIRECT' || band === 'REUSE')) {
      const { fullCall, fullPricing, chargeUsd } = fullCallOf(ctx, req, exact);
      const saving = hitSaving({ band, fullCall, fullPricing });
      note(band, 1, saving.tokensSaved, saving.savedUsd, 0, true);
      return hit(ctx, { band, score: 1, entry: exact, saving, chargeUsd, policy });
    }
  }
  const vectors = await failOpen(deps, ctx, 'embed', () => embedForCache(embedder, parts));
  if (!vectors) {
    note('MISS', null);
    return { kind: 'miss', store: undefined };
  }
  const store = skip.store ? storeLater(deps, ctx, req, scope, parts, digest, vectors, policy) : undefined;
  if (!skip.lookup) {
    note('SKIP', null);
    return { kind: 'miss', store };
  }

  const found = await failOpen(deps, ctx, 'search', () => nearest(deps, ctx, parts, vectors, policy, req));
  const band = found ? chooseBand(found.score, policy.thresholds) : 'MISS';
  if (!found || band === 'MISS') {
    note('MISS', found?.score ?? null);
    return { kind: 'miss', store };
  }

  const { fullCall, fullPricing, chargeUsd } = fullCallOf(ctx, req, found.entry);
  let tweak: ChatRequest | undefined;
  let saving: HitSaving;
  if (band === 'TWEAK') {
    const tweakRoute = policy.tweakModel ? ctx.snapshot.models.get(policy.tweakModel) : undefined;
    // The adapted answer comes from the tweak model: only for keys that may use it.
    if (!policy.tweakModel || !tweakRoute || !mayUse(ctx, policy.tweakModel)) {
      note('MISS', found.score);
      return { kind: 'miss', store };
    }
    tweak = tweakRequest(found.entry, parts.query, policy.tweakModel, req);
    const adaptation = estimateTweakTokens(tweak, found.entry);
    const adaptationPricing = dearestPricing(tweakRoute);
    saving = hitSaving({ band, fullCall, fullPricing, adaptation, adaptationPricing });
    if (!tweakWorthIt(chargeUsd, callCostUsd(adaptationPricing, adaptation))) {
      note('MISS', found.score);
      return { kind: 'miss', store };
    }
  } else saving = hitSaving({ band, fullCall, fullPricing });

  note(band, found.score, saving.tokensSaved, saving.savedUsd);
  return hit(ctx, { band, score: found.score, entry: found.entry, saving, chargeUsd, tweak, policy });
}

type Hit = Extract<CacheLookup, { kind: 'hit' }>;

function hit(ctx: RequestContext, h: Omit<Hit, 'kind' | 'response'>): Hit {
  if (h.entry.meta !== undefined) ctx.responseHeaders[ResponseHeaders.cacheMatchedMeta] = h.entry.meta;
  return { kind: 'hit', ...h, response: h.entry.response };
}

/** The call a hit replaces, at the requested model's pricing: what the caller pays. */
function fullCallOf(
  ctx: RequestContext,
  req: ChatRequest,
  entry: CacheEntry,
): { fullCall: TokenCount; fullPricing: ReturnType<typeof dearestPricing> | undefined; chargeUsd: number } {
  const route = ctx.snapshot.models.get(req.model);
  const fullPricing = route ? dearestPricing(route) : undefined;
  const fullCall = { promptTokens: promptTokensOf(ctx, req), completionTokens: entry.completionTokens };
  return { fullCall, fullPricing, chargeUsd: callCostUsd(fullPricing, fullCall) };
}

/**
 * The entry stored for exactly this request, if it may answer it: the same checks as a
 * semantic candidate — it fits the request's limits and its model is one this key may use.
 * The look-alike guards have nothing to compare: the question text is the same.
 */
async function exactEntry(
  deps: CacheDeps,
  ctx: RequestContext,
  parts: CacheKeyParts,
  digest: string,
  req: ChatRequest,
): Promise<CacheEntry | undefined> {
  const entry = await deps.entries.getExact(parts.partition, digest);
  if (!entry || !entryServes(entry, req) || !mayUse(ctx, entry.response.model)) return undefined;
  return entry;
}

/**
 * The best unexpired entry that may answer this request, with its DualScore: one that fits
 * the request's limits, states the same facts (numbers, negations, entities… — lookalike.ts)
 * and was produced by a model this key may use.
 */
async function nearest(
  deps: CacheDeps,
  ctx: RequestContext,
  parts: CacheKeyParts,
  v: CacheVectors,
  policy: ResolvedCachePolicy,
  req: ChatRequest,
): Promise<{ entry: CacheEntry; score: number } | undefined> {
  const hits = await deps.vectors.search(
    parts.partition,
    probeVector(v.query, v.context, policy.alpha, policy.beta),
    SEARCH_K,
  );
  const facts = hits.length > 0 ? questionFacts(parts.query) : undefined;
  for (const hit of hits) {
    const entry = await deps.entries.get(parts.partition, hit.id);
    if (!entry || !entryServes(entry, req) || !mayUse(ctx, entry.response.model)) continue;
    const conflict =
      questionsConflict(parts.query, facts, entry.query) ??
      (operandsSwapped(parts.query, entry.query) ? 'order' : undefined);
    if (conflict) {
      ctx.log.debug({ conflict, score: hit.score }, 'semantic cache: look-alike question declined');
      continue;
    }
    return { entry, score: hit.score };
  }
  return undefined;
}

/**
 * Stores an answer in the partition of the model that produced it: when a fallback served,
 * its answer must not come back to requests routed to the primary (another model, another
 * price, maybe one the next key may not use).
 */
function storeLater(
  deps: CacheDeps,
  ctx: RequestContext,
  req: ChatRequest,
  scope: CacheScope,
  routedParts: CacheKeyParts,
  routedDigest: string,
  v: CacheVectors,
  policy: ResolvedCachePolicy,
): (response: ChatCompletion) => Promise<void> {
  return async (response) => {
    if (!isStorable(response)) return;
    const routed = response.model === req.model;
    const parts = routed ? routedParts : cacheKeyParts({ ...req, model: response.model }, scope);
    if (!parts) return;
    const digest = routed ? routedDigest : exactDigest(parts);
    const meta = ctx.requestHeaders[RequestHeaders.cacheMeta];
    const entry = buildCacheEntry({
      parts,
      req,
      response,
      now: Date.now(),
      ttlSeconds: policy.ttlSeconds,
      meta: typeof meta === 'string' ? meta : undefined,
    });
    await failOpen(deps, ctx, 'store', async () => {
      // Only a cut answer can lose the digest, so only it pays the read.
      const held = isCut(response) ? await deps.entries.getExact(parts.partition, digest) : undefined;
      await deps.entries.put(entry, takesExactDigest(response, held?.response) ? digest : undefined);
      await deps.vectors.upsert(parts.partition, entry.id, entryVector(v.query, v.context), entry.expiresAt);
    });
  };
}

/**
 * A broken embedder or store fails every lookup, so each kind of failure warns at most once per
 * interval per gateway, saying how many went quiet (at debug) since; the failures metric still
 * counts every one. Keyed by the gateway's CacheDeps, so gateways in one process (tests) each
 * get their own line.
 */
export const CACHE_FAILURE_WARN_EVERY_MS = 30_000;
const failureSamplers = new WeakMap<CacheDeps, Map<string, LogSampler>>();

function failureSampler(deps: CacheDeps, operation: string): LogSampler {
  let byOperation = failureSamplers.get(deps);
  if (!byOperation) failureSamplers.set(deps, (byOperation = new Map()));
  let sampler = byOperation.get(operation);
  if (!sampler) byOperation.set(operation, (sampler = new LogSampler(CACHE_FAILURE_WARN_EVERY_MS)));
  return sampler;
}

async function failOpen<T>(
  deps: CacheDeps,
  ctx: RequestContext,
  operation: string,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    deps.metrics.cacheFailures.inc({ operation });
    const fields = { operation, err: (err as Error).message };
    const quiet = failureSampler(deps, operation).take();
    if (quiet === undefined) ctx.log.debug(fields, 'semantic cache unavailable; serving from the model');
    else
      ctx.log.warn(
        { ...fields, quietSinceLast: quiet },
        'semantic cache unavailable; serving from the model',
      );
    return undefined;
  }
}
