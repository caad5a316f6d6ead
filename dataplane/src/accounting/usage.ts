/**
 * One record per request, whatever its outcome: the source of spend, rollups, the request
 * log and every analytics view. Never holds a key, a credential or prompt text.
 */
import type { ProviderKind } from '@gantry/crds';

export type UsageEndpoint =
  | 'chat'
  | 'messages'
  | 'responses'
  | 'completions'
  | 'embeddings'
  | 'moderations'
  | 'rerank'
  | 'token_counter'
  | 'generate_content'
  | 'fine_tuning'
  | 'images'
  | 'audio.transcriptions'
  | 'audio.speech'
  | 'videos'
  | 'a2a'
  | 'interactions'
  | 'ocr'
  | 'rag.ingest'
  | 'rag.query'
  | 'files'
  | 'batches'
  | 'vector_stores'
  | 'assistants'
  | 'containers'
  | 'realtime'
  /** A model list or lookup that failed (a successful one is not recorded). */
  | 'models';

export interface GuardrailVerdictSummary {
  action: GuardrailAction;
  /**
   * Counts per guardrail and category; never the matched text. `action` is what that guardrail
   * did when it differs from the verdict's (e.g. PII redacted in a request blocked for injection);
   * absent means the verdict's action.
   */
  findings: { guardrail: string; category: string; count: number; action?: GuardrailAction | undefined }[];
}

export type GuardrailAction = 'allow' | 'flag' | 'redact' | 'block';

export interface CacheSummary {
  band: 'DIRECT' | 'REUSE' | 'TWEAK' | 'MISS' | 'SKIP';
  score: number | undefined;
  tokensSaved: number;
  savedUsd: number;
  creditedUsd: number;
  latencyMs: number;
  /** Served by the exact tier (the same request again, no embedding); absent otherwise. */
  exact?: boolean;
}

export interface UsageRecord {
  /** The request id (x-gantry-request-id). */
  id: string;
  /** Epoch milliseconds at the end of the request. */
  at: number;
  tenant: string;
  /** ApiKey `namespace/name`. */
  keyId: string;
  endpoint: UsageEndpoint;
  requestedModel: string;
  /** The model that served; the requested one when nothing served. */
  model: string;
  /** ModelDeployment name that served, when one did. */
  deployment: string | undefined;
  /**
   * The serving deployment's provider; for a call a stage made on the request's behalf
   * (record id `<request id>:compression`), that stage's label, so its spend stands apart.
   */
  provider: ProviderKind | 'compression' | undefined;
  euResident: boolean;
  status: number;
  /** Error `type` when status >= 400. */
  errorType: string | undefined;
  stream: boolean;
  attempts: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** What the caller was charged, USD. */
  costUsd: number;
  latencyMs: number;
  cache: CacheSummary | undefined;
  guardrails: GuardrailVerdictSummary | undefined;
  compression: { ratio: number; originalTokens: number; tokens: number; savedUsd: number } | undefined;
  routing: { level: string; model: string; effort: string | undefined } | undefined;
}

/**
 * Rollup cell: day × tenant × key × model × provider. Money is summed in integer micro-dollars
 * by the stores and reported here in USD (exact to the µ$); sum it with `toMicros` again.
 */
export interface RollupRow {
  day: string; // YYYY-MM-DD (UTC)
  tenant: string;
  keyId: string;
  /** The model that served (`UsageRecord.model`). */
  model: string;
  provider: string; // ProviderKind; '' when nothing served
  requests: number;
  /** Requests answered with status >= 400. */
  errors: number;
  /** Requests served by an EU-resident deployment. */
  euRequests: number;
  /** Requests served by a deployment that is not EU-resident. Unserved requests are in neither. */
  nonEuRequests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
  /** Requests the cache answered (DIRECT, REUSE or TWEAK). */
  cacheHits: number;
  cacheSavedUsd: number;
  cacheCreditedUsd: number;
  /** Tokens the cache saved. */
  tokensSaved: number;
  guardrailBlocks: number;
  guardrailFlags: number;
  compressedRequests: number;
  compressionSavedTokens: number;
  // ---- extensions (issue 3, analytics) ----
  /** Requests the cache was consulted for (a band other than SKIP). */
  cacheLookups: number;
  cacheDirect: number;
  cacheReuse: number;
  cacheTweak: number;
  /** What callers were charged for requests the cache answered. */
  cacheHitCostUsd: number;
  guardrailRedactions: number;
  /** Tokens before compression, over compressed requests (ratio = saved / original). */
  compressionOriginalTokens: number;
  compressionSavedUsd: number;
  /** Sum of latencies, for averages. */
  latencyMsTotal: number;
}

export interface UsageQuery {
  /** undefined = all tenants (platform admin only). */
  tenant: string | undefined;
  from: string; // YYYY-MM-DD inclusive
  to: string; // YYYY-MM-DD inclusive
  keyId?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
}

export interface SecurityRow {
  tenant: string;
  day: string;
  guardrail: string;
  category: string;
  /** What was done: `block`, `redact` or `flag` (allowed requests are not violations). */
  action: string;
  /** Requests with this finding. */
  count: number;
  /** Matches found in them (a request with three e-mail addresses counts 3 here, 1 in `count`). */
  findings: number;
}

/** The distinct values a tenant's usage has, for filters. */
export interface UsageDimensions {
  keys: string[];
  models: string[];
  providers: string[];
}

/** Where usage goes. Memory and Redis implementations; Redis shares it across pods. */
export interface UsageStore {
  /**
   * Counts the record once: a record whose id was already recorded (within the dedupe window,
   * a day by default) is ignored and false is returned, so a retried record is never counted twice.
   */
  record(r: UsageRecord): Promise<boolean>;
  rollups(q: UsageQuery): Promise<RollupRow[]>;
  /** Newest first, bounded (the newest 10,000 per tenant by default). */
  logs(q: UsageQuery & { limit: number }): Promise<UsageRecord[]>;
  security(q: UsageQuery): Promise<SecurityRow[]>;
  /** Keys, models and providers seen in the tenant's usage (sorted). */
  dimensions(tenant: string): Promise<UsageDimensions>;
  /** Tenants with recorded usage (sorted): the scope of platform-wide queries. */
  tenants(): Promise<string[]>;
}
