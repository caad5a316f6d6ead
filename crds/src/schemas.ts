/**
 * The Gantry API: one source of truth for the five kinds. The same schemas validate
 * objects in the apiserver (rendered into CRD openAPIV3Schema), in the operator and in
 * the standalone gantry.yaml (ajv).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const GROUP = 'gantry.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

const Name = Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' });
// Secret references follow the apiserver's own rules exactly: one it admits here but refuses
// for the Secret itself reaches the operator, whose create of that Secret then fails. Neither
// pattern uses lookahead, which the apiserver's regular expressions (RE2) do not have.
/** A DNS subdomain: dot-separated labels, each starting and ending alphanumeric. */
const SecretName = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
});
/** A key of a Secret's data: not '.', not '..', not starting with '..'. */
const SecretDataKey = Type.String({
  maxLength: 253,
  pattern: '^([-_a-zA-Z0-9][-._a-zA-Z0-9]*|\\.[-_a-zA-Z0-9][-._a-zA-Z0-9]*)$',
});
// Money is counted in integer micro-dollars, exact below 2^53: about 9e9 USD. The cap keeps every
// configured amount far inside that (a larger budget would fail each admission instead).
const Usd = Type.Number({ minimum: 0, maximum: 1e9 });
const LocalObjectRef = Type.Object({ name: Name }, { additionalProperties: false });
const CredentialsSecretRef = Type.Object(
  { name: SecretName, key: SecretDataKey },
  {
    additionalProperties: false,
    description:
      'Secret (this namespace) and data key holding the provider key; the Secret must be labelled gantry.dev/credentials=provider',
  },
);

export const ProviderKinds = ['openai', 'openai-compatible', 'azure-openai', 'anthropic', 'gemini'] as const;
export type ProviderKind = (typeof ProviderKinds)[number];

export const Capabilities = [
  'chat',
  'streaming',
  'tools',
  'vision',
  'documents',
  'json_mode',
  'embeddings',
  'completions',
  'reasoning',
  'prefill',
  'images',
  'audio',
  'moderations',
  'rerank',
  'fine_tuning',
  'video',
  /** An A2A agent: the deployment's baseUrl is the agent's JSON-RPC endpoint. */
  'a2a',
  'ocr',
  // Resource families OpenAI stores upstream (issue 14 point 4): the deployment keeps the
  // objects, Gantry records who owns them.
  'files',
  'batches',
  'vector_stores',
  'assistants',
  'containers',
  'realtime',
] as const;
export type Capability = (typeof Capabilities)[number];

const literalUnion = <T extends readonly string[]>(values: T) =>
  Type.Union(values.map((v) => Type.Literal(v)) as never) as unknown as TSchema & { static: T[number] };

export const Metadata = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' }),
    namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
    generation: Type.Optional(Type.Integer()),
    uid: Type.Optional(Type.String()),
    resourceVersion: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const Condition = Type.Object({
  type: Type.String(),
  status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
  reason: Type.String(),
  message: Type.String(),
  observedGeneration: Type.Optional(Type.Integer()),
  lastTransitionTime: Type.Optional(Type.String()),
});

const Status = (extra: Record<string, TSchema> = {}) =>
  Type.Object({ conditions: Type.Optional(Type.Array(Condition)), ...extra });

export const Pricing = Type.Object(
  {
    inputPerMillionTokens: Usd,
    outputPerMillionTokens: Usd,
    cachedInputPerMillionTokens: Type.Optional(Usd),
    perImage: Type.Optional(Usd),
    perSecond: Type.Optional(Usd),
    perCharacter: Type.Optional(Usd),
    /** Per search (one rerank query over its documents), for rerank deployments. */
    perSearch: Type.Optional(Usd),
    /** Per page read, for OCR deployments. */
    perPage: Type.Optional(Usd),
    /** Per call, for A2A agents (whatever the agent does inside). */
    perRequest: Type.Optional(Usd),
    /** Realtime audio tokens; text tokens use the input/output prices. Absent: the text price. */
    audioInputPerMillionTokens: Type.Optional(Usd),
    audioOutputPerMillionTokens: Type.Optional(Usd),
    /** Fine-tuning, per million tokens trained (the job's `trained_tokens`), charged when it succeeds. */
    trainingPerMillionTokens: Type.Optional(Usd),
  },
  { additionalProperties: false },
);

export const RetryPolicy = Type.Object(
  {
    attempts: Type.Integer({
      minimum: 1,
      maximum: 5,
      description:
        'Attempts on this deployment for a listed failure, the first included, before failing over (1 = fail over at once)',
    }),
    backoffMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60000,
        default: 100,
        description: 'First backoff ceiling; doubles per retry',
      }),
    ),
    maxBackoffMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60000,
        default: 2000,
        description:
          'Longest wait between two attempts; a 429 whose Retry-After is longer fails over instead',
      }),
    ),
    retryOnStatus: Type.Optional(
      Type.Array(Type.Integer({ minimum: 429, maximum: 599 }), {
        uniqueItems: true,
        maxItems: 72,
        default: [429, 500, 502, 503, 504, 529],
        description: 'Upstream statuses retried: 429 and 5xx only',
      }),
    ),
    retryOnConnectionError: Type.Optional(
      Type.Boolean({ default: true, description: 'Retry a connection refused or reset before any response' }),
    ),
  },
  { additionalProperties: false },
);

export const CircuitBreakerPolicy = Type.Object(
  {
    failureThreshold: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 3,
        description: 'Consecutive faults that open the circuit',
      }),
    ),
    openMs: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 300000,
        default: 5000,
        description: 'First open period; doubles with each failed trial up to maxOpenMs',
      }),
    ),
    maxOpenMs: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 300000,
        default: 10000,
        description: 'Longest open period and longest gap between trials of an open circuit',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Longest a deployment timeout may be: Node's own timer limit, 2^31-1 ms (~24.8 days). Node runs
 * a longer timer after 1 ms instead, so a firstTokenTimeoutMs of 3e9 failed every stream at once.
 * Not lower: every value up to it worked before, and a tighter cap would turn existing objects
 * (and whole snapshots an older operator published) into rejects on upgrade.
 */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Every string bounded (a test walks the schema): over the snapshot limit, an edit that may take
 * something away goes ahead of older waiting changes whole, so whatever rides along with it
 * (a longer region, say) jumps the queue too. Bounded, that is a few kilobytes at most.
 */
export const ModelDeploymentSpec = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, description: 'The model id clients send' }),
    provider: literalUnion(ProviderKinds),
    upstreamModel: Type.String({ minLength: 1, maxLength: 200 }),
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2048 })),
    apiVersion: Type.Optional(Type.String({ maxLength: 64, description: 'azure-openai api-version' })),
    apiKeyEnv: Type.Optional(
      Type.String({
        maxLength: 256,
        pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
        description:
          "The data plane's environment variable holding the provider key; never a GANTRY_* one. In a cluster, only a variable the chart lists in providerEnv (otherwise Ready=False EnvNotAllowed).",
      }),
    ),
    credentialsSecretRef: Type.Optional(CredentialsSecretRef),
    weight: Type.Optional(Type.Number({ minimum: 0, default: 1 })),
    priority: Type.Optional(Type.Integer({ minimum: 0, default: 1 })),
    fallbacks: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 8 })),
    region: Type.Optional(Type.String({ maxLength: 64 })),
    euResident: Type.Optional(Type.Boolean({ default: false })),
    pricing: Type.Optional(Pricing),
    capabilities: Type.Optional(Type.Array(literalUnion(Capabilities), { uniqueItems: true })),
    contextWindow: Type.Optional(Type.Integer({ minimum: 1 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: MAX_TIMEOUT_MS,
        default: 60000,
        description: 'Total time for one attempt',
      }),
    ),
    connectTimeoutMs: Type.Optional(Type.Integer({ minimum: 10, maximum: MAX_TIMEOUT_MS, default: 5000 })),
    headersTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: MAX_TIMEOUT_MS,
        description:
          'Time to response headers; defaults to timeoutMs (non-streaming answers send headers last)',
      }),
    ),
    firstTokenTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: MAX_TIMEOUT_MS,
        description:
          'Fail a stream over when no token arrived this long after the request was sent (headers included); defaults to min(30000, timeoutMs)',
      }),
    ),
    streamIdleTimeoutMs: Type.Optional(
      Type.Integer({ minimum: 10, maximum: MAX_TIMEOUT_MS, default: 30000 }),
    ),
    rpm: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Provider quota, requests per minute: the router sends this deployment no more (shared across pods through Redis) and fails over to the next candidate when its window is full',
      }),
    ),
    tpm: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "Provider quota, tokens per minute (each attempt counts the request's estimate: prompt plus output bound): the router fails over when the window is full",
      }),
    ),
    retry: Type.Optional(RetryPolicy),
    circuitBreaker: Type.Optional(CircuitBreakerPolicy),
  },
  { additionalProperties: false },
);

export const Tiers = ['free', 'pro', 'enterprise'] as const;
export const ReasoningEfforts = ['minimal', 'low', 'medium', 'high'] as const;
const RoutingLevel = Type.Object(
  { model: Type.String({ minLength: 1 }), reasoningEffort: Type.Optional(literalUnion(ReasoningEfforts)) },
  { additionalProperties: false },
);

export const TenantSpec = Type.Object(
  {
    tier: Type.Optional(literalUnion(Tiers)),
    models: Type.Array(Type.String({ minLength: 1 }), {
      description: 'Models the tenant may use; "*" allows all',
    }),
    wallet: Type.Optional(Type.Object({ balanceUsd: Usd }, { additionalProperties: false })),
    cache: Type.Optional(
      Type.Object(
        { enabled: Type.Boolean(), policyRef: Type.Optional(LocalObjectRef) },
        { additionalProperties: false },
      ),
    ),
    guardrails: Type.Optional(
      Type.Object({ policyRef: Type.Optional(LocalObjectRef) }, { additionalProperties: false }),
    ),
    compression: Type.Optional(
      Type.Object(
        {
          enabled: Type.Boolean(),
          thresholdTokens: Type.Optional(Type.Integer({ minimum: 1 })),
          stepWindow: Type.Optional(Type.Integer({ minimum: 0 })),
          extractionModel: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
    routing: Type.Optional(
      Type.Object(
        {
          enabled: Type.Boolean(),
          levels: Type.Optional(
            Type.Object(
              {
                trivial: Type.Optional(RoutingLevel),
                standard: Type.Optional(RoutingLevel),
                complex: Type.Optional(RoutingLevel),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const BudgetPeriods = ['daily', 'monthly', 'total'] as const;
export const KeyRoles = ['user', 'admin'] as const;

export const ApiKeySpec = Type.Object(
  {
    tenantRef: LocalObjectRef,
    keyHash: Type.Optional(Type.String({ pattern: '^[a-f0-9]{64}$', description: 'hex SHA-256 of the key' })),
    secretRef: Type.Optional(
      Type.Object(
        { name: SecretName, key: Type.Optional(SecretDataKey) },
        {
          additionalProperties: false,
          description:
            'Secret (this namespace) and data key (default "key") holding the gateway key; published only as its SHA-256. If the Secret does not exist, the operator generates a key into it. A Secret made by someone else must be labelled gantry.dev/credentials=apikey',
        },
      ),
    ),
    budget: Type.Optional(
      Type.Object({ limitUsd: Usd, period: literalUnion(BudgetPeriods) }, { additionalProperties: false }),
    ),
    autoRecharge: Type.Optional(
      Type.Object(
        { enabled: Type.Boolean(), thresholdUsd: Usd, amountUsd: Usd, monthlyCapUsd: Usd },
        { additionalProperties: false },
      ),
    ),
    models: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    rateLimit: Type.Optional(
      Type.Object(
        {
          requestsPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
          tokensPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    role: Type.Optional(literalUnion(KeyRoles)),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const GuardActions = ['block', 'redact', 'flag', 'off'] as const;
const GuardCheck = Type.Object(
  {
    action: literalUnion(GuardActions),
    threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);
/**
 * PII entity kinds the guard detects; a policy naming another is rejected when the config
 * loads (and by the API server through the CRD), because a misspelt name would otherwise
 * silently turn that kind off.
 */
export const PiiEntities = [
  'EMAIL',
  'PHONE',
  'CREDIT_CARD',
  'IBAN',
  'US_SSN',
  'IP_ADDRESS',
  'UK_NINO',
  'DE_TAX_ID',
  'ES_DNI',
  'NL_BSN',
  'BR_CPF',
] as const;
export type PiiEntity = (typeof PiiEntities)[number];
/** A plain `enum` (not a union of literals) so a wrong name reads "must be one of: ...". */
const PiiEntityName = Type.Unsafe<PiiEntity>({ type: 'string', enum: [...PiiEntities] });

export const GuardrailPolicySpec = Type.Object(
  {
    promptInjection: Type.Optional(GuardCheck),
    toxicity: Type.Optional(GuardCheck),
    pii: Type.Optional(
      Type.Object(
        {
          action: literalUnion(GuardActions),
          threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          entities: Type.Optional(Type.Array(PiiEntityName)),
        },
        { additionalProperties: false },
      ),
    ),
    secrets: Type.Optional(GuardCheck),
    scanResponses: Type.Optional(Type.Boolean()),
    allowRequestOptOut: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Whether a request may turn checks off with the guard header (none, or a list leaving some out); false answers such a request 403',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CachePolicySpec = Type.Object(
  {
    alpha: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.7 })),
    beta: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.3 })),
    thresholds: Type.Optional(
      Type.Object(
        {
          direct: Type.Number({ minimum: 0, maximum: 1 }),
          reuse: Type.Number({ minimum: 0, maximum: 1 }),
          tweak: Type.Number({ minimum: 0, maximum: 1 }),
        },
        { additionalProperties: false },
      ),
    ),
    tweakModel: Type.Optional(Type.String()),
    embeddingModel: Type.Optional(Type.String({ default: 'minilm' })),
    ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, default: 86400 })),
    savingsShare: Type.Optional(Type.Record(Type.String(), Type.Number({ minimum: 0, maximum: 100 }))),
  },
  { additionalProperties: false },
);

const manifest = <K extends string, S extends TSchema, St extends TSchema>(kind: K, spec: S, status: St) =>
  Type.Object({
    apiVersion: Type.Literal(API_VERSION),
    kind: Type.Literal(kind),
    metadata: Metadata,
    spec,
    status: Type.Optional(status),
  });

export const ModelDeployment = manifest('ModelDeployment', ModelDeploymentSpec, Status());
export const Tenant = manifest(
  'Tenant',
  TenantSpec,
  Status({ walletBalanceUsd: Type.Optional(Type.Number()), keys: Type.Optional(Type.Integer()) }),
);
export const ApiKey = manifest(
  'ApiKey',
  ApiKeySpec,
  Status({
    spendUsd: Type.Optional(Type.Number()),
    remainingUsd: Type.Optional(Type.Number()),
    lastUsed: Type.Optional(Type.String()),
    keyHash: Type.Optional(Type.String()),
  }),
);
export const GuardrailPolicy = manifest('GuardrailPolicy', GuardrailPolicySpec, Status());
export const CachePolicy = manifest('CachePolicy', CachePolicySpec, Status());

export type ModelDeploymentSpec = Static<typeof ModelDeploymentSpec>;
export type TenantSpec = Static<typeof TenantSpec>;
export type ApiKeySpec = Static<typeof ApiKeySpec>;
export type GuardrailPolicySpec = Static<typeof GuardrailPolicySpec>;
export type CachePolicySpec = Static<typeof CachePolicySpec>;
export type ModelDeployment = Static<typeof ModelDeployment>;
export type Tenant = Static<typeof Tenant>;
export type ApiKey = Static<typeof ApiKey>;
export type GuardrailPolicy = Static<typeof GuardrailPolicy>;
export type CachePolicy = Static<typeof CachePolicy>;
export type Condition = Static<typeof Condition>;

export const Kinds = {
  ModelDeployment,
  Tenant,
  ApiKey,
  GuardrailPolicy,
  CachePolicy,
} as const;
export type KindName = keyof typeof Kinds;
export type Manifest = ModelDeployment | Tenant | ApiKey | GuardrailPolicy | CachePolicy;
