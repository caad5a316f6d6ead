/**
 * The semantic cache's pure core (SPEC.md "Semantic cache rules"): embedders, request keys,
 * DualScore and bands, skip rules, entry rules and the money of a hit. The stage that wires
 * them to the stores (stores/vectors, stores/cache-entries) composes these.
 */
export {
  Bands,
  BUILTIN_EMBEDDING_MODEL,
  BUILTIN_THRESHOLDS,
  DEFAULT_SAVINGS_SHARE,
  DEFAULT_THRESHOLDS,
  DEFAULT_TTL_SECONDS,
  resolveCachePolicy,
  tenantCacheEnabled,
  tenantTier,
  type Band,
  type BandThresholds,
  type CacheFormat,
  type ResolvedCachePolicy,
} from './policy.ts';
export {
  EMPTY_TEXT,
  EmbeddingError,
  embedForCache,
  isEmbeddingError,
  type CacheVectors,
  type Embedder,
} from './embedder.ts';
export { BUILTIN_DIMENSIONS, builtinEmbed, createBuiltinEmbedder } from './builtin-embedder.ts';
export { createModelEmbedder, type EmbedCall, type ModelEmbedderOptions } from './model-embedder.ts';
export { cacheKeyParts, IGNORED_FIELDS, type CacheKeyParts, type CacheScope } from './key.ts';
export { extractFacts, factConflict, factsSignature, type FactKind, type Facts } from './lookalike.ts';
export { chooseBand, cosine, dualScore, entryVector, probeVector } from './score.ts';
export {
  bodyBypasses,
  cacheFormatOf,
  headerOptsOut,
  skipReason,
  type CacheSkipDecision,
  type CacheSkipReason,
  type Endpoint,
} from './skip.ts';
export { buildCacheEntry, entryServes, isStorable, requestMaxTokens, type BuildEntryInput } from './entry.ts';
export {
  callCostUsd,
  hitSaving,
  tweakWorthIt,
  walletCreditUsd,
  type HitSaving,
  type HitSavingInput,
  type TokenCount,
} from './economics.ts';
export { estimateTweakTokens, tweakRequest } from './tweak.ts';
