/**
 * The compiled, immutable config the data plane serves from. Kubernetes-free: built from
 * the manifests (standalone YAML or, later, the operator's rendering) by a pure compile
 * step, and swapped atomically as a whole. A request keeps the snapshot it started with.
 */
import type {
  ApiKeySpec,
  CachePolicySpec,
  Capability,
  GuardrailPolicySpec,
  ProviderKind,
  TenantSpec,
} from '@gantry/crds';
import type { UpstreamTarget } from '../providers/types.ts';
import type { BreakerConfig } from '../router/breaker.ts';
import type { DeploymentRetry } from '../router/policy.ts';

export interface Pricing {
  inputPerMillionTokens: number;
  outputPerMillionTokens: number;
  cachedInputPerMillionTokens?: number | undefined;
  /** USD per search (one rerank query over its documents). */
  perSearch?: number | undefined;
  /** Media endpoints, priced per unit rather than per token. */
  perImage?: number | undefined;
  perSecond?: number | undefined;
  perCharacter?: number | undefined;
  /** OCR, per page read. */
  perPage?: number | undefined;
  /** A2A agents, per call. */
  perRequest?: number | undefined;
  /** Realtime audio tokens; the text prices when absent. */
  audioInputPerMillionTokens?: number | undefined;
  audioOutputPerMillionTokens?: number | undefined;
  /** Fine-tuning, per million tokens trained; a job is charged once, when seen succeeded. */
  trainingPerMillionTokens?: number | undefined;
}

export interface DeploymentTimeouts {
  /** Whole attempt, headers to last byte for non-streaming calls. */
  totalMs: number;
  connectMs: number;
  headersMs: number;
  /** Streams: the first token must arrive within this, counted from sending the request. */
  firstTokenMs: number | undefined;
  /** Streams: longest silence between two chunks. */
  idleMs: number;
}

export interface Deployment {
  /** ModelDeployment metadata.name: what X-Gantry-Provider and X-Gantry-Failed carry. */
  name: string;
  model: string;
  provider: ProviderKind;
  target: UpstreamTarget;
  weight: number;
  priority: number;
  region: string | undefined;
  euResident: boolean;
  pricing: Pricing | undefined;
  capabilities: ReadonlySet<Capability>;
  contextWindow: number | undefined;
  maxOutputTokens?: number | undefined;
  timeouts: DeploymentTimeouts;
  /** Same-deployment retries before failing over; undefined = fail over at once. */
  retry?: DeploymentRetry | undefined;
  /** Breaker settings the manifest sets; the rest come from the gateway's defaults. */
  circuitBreaker?: Partial<BreakerConfig> | undefined;
  /** The provider's quota for this deployment (`spec.rpm`, `spec.tpm`): the router sends no more per minute. */
  rpm?: number | undefined;
  tpm?: number | undefined;
}

export interface ModelRoute {
  model: string;
  /** Sorted by priority, lowest first. */
  deployments: readonly Deployment[];
  fallbacks: readonly string[];
  /** Union of the deployments' capabilities: what the model can do somewhere. */
  capabilities: ReadonlySet<Capability>;
  ownedBy: ProviderKind;
}

export interface KeyRecord {
  /** `namespace/name` of the ApiKey: stable id for accounting and logs, never the key. */
  id: string;
  hash: Buffer;
  tenant: string;
  /** Key restriction inside the tenant's allow list; undefined = no narrowing. */
  models: ReadonlySet<string> | undefined;
  role: 'user' | 'admin';
  spec: ApiKeySpec;
}

export interface TenantRecord {
  name: string;
  /** undefined = every model ("*"). */
  models: ReadonlySet<string> | undefined;
  spec: TenantSpec;
  guardrails: GuardrailPolicySpec | undefined;
  cache: CachePolicySpec | undefined;
}

export interface Snapshot {
  /** Increments with every successful load; visible in logs and /readyz. */
  version: number;
  source: string;
  loadedAt: Date;
  models: ReadonlyMap<string, ModelRoute>;
  /** hex SHA-256 of the key → record. */
  keys: ReadonlyMap<string, KeyRecord>;
  tenants: ReadonlyMap<string, TenantRecord>;
  /** Published deployments this pod does not serve (absent: none). */
  leftOut?: readonly LeftOutDeployment[] | undefined;
}

/** A published deployment left out of this pod's snapshot: the variable its key is in is unset here. */
export interface LeftOutDeployment {
  deployment: string;
  model: string;
  /** The apiKeyEnv name (the operator's configuration, not a secret). */
  env: string;
}

/**
 * A model the snapshot configures but this pod does not serve: every deployment of it was left
 * out. Requests for it are not for an unknown model, and not for the built-in moderation.
 */
export const notServedHere = (s: Pick<Snapshot, 'models' | 'leftOut'>, model: string): boolean =>
  !s.models.has(model) && (s.leftOut ?? []).some((l) => l.model === model);
