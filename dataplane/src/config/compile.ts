/**
 * Pure compile step: validated manifests + environment → Snapshot, or every problem found
 * (each naming its file, document and field). No I/O here, so it is tested exhaustively.
 */
import type {
  ApiKey,
  Capability,
  CachePolicy,
  GuardrailPolicy,
  Manifest,
  ModelDeployment,
  ProviderKind,
  Tenant,
} from '@gantry/crds';
import { Buffer } from 'node:buffer';
import { DEFAULT_BREAKER, type BreakerConfig } from '../router/breaker.ts';
import { TRANSIENT_STATUSES, type DeploymentRetry } from '../router/policy.ts';
import type {
  Deployment,
  KeyRecord,
  LeftOutDeployment,
  ModelRoute,
  Snapshot,
  TenantRecord,
} from './snapshot.ts';

export interface LocatedManifest {
  manifest: Manifest;
  /** e.g. `gantry.yaml document 3 (ModelDeployment/gpt-4o)` */
  where: string;
}

export interface CompileOptions {
  env: Readonly<Record<string, string | undefined>>;
  version: number;
  source: string;
  /** Offline mode: a deployment whose credential env var is unset is served by this fake. */
  fakeBaseUrl?: ((provider: ProviderKind) => string) | undefined;
  /** In a cluster: provider credentials the operator resolved from Secrets, by deployment name. */
  credentials?: ReadonlyMap<string, string> | undefined;
  /**
   * A deployment whose apiKeyEnv is unset (and no fake serves it): an error (a config file,
   * checked at start-up by whoever wrote it), or left out with a warning (a published snapshot:
   * the operator cannot see a pod's env, and one such deployment rejecting the snapshot whole
   * would stall every later change, revocations included, on that pod).
   */
  unsetEnv?: 'error' | 'leave-out';
  now?: Date;
}

/**
 * Part of the message for an apiKeyEnv naming a GANTRY_* variable; the operator matches it to
 * report EnvNotAllowed.
 */
export const API_KEY_ENV_NOT_ALLOWED =
  "GANTRY_* variables are the gateway's own settings (Redis password, admin key, compaction secret), never a provider key";

/** GANTRY_* in any case: on a case-insensitive environment gantry_admin_key is the same variable. */
export const isGatewaySetting = (name: string): boolean => /^gantry_/i.test(name);

export type CompileResult =
  { ok: true; snapshot: Snapshot; warnings: string[] } | { ok: false; errors: string[] };

const DEFAULT_BASE_URL: Partial<Record<ProviderKind, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  gemini: 'https://generativelanguage.googleapis.com/v1beta',
};

const DEFAULT_CAPABILITIES: readonly Capability[] = ['chat', 'streaming', 'tools', 'vision', 'json_mode'];

/** Providers whose API always continues a trailing assistant message. */
const PREFILL_BY_DEFAULT: ReadonlySet<ProviderKind> = new Set(['anthropic']);

export function compile(items: readonly LocatedManifest[], opts: CompileOptions): CompileResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const byKind = groupByKind(items, errors);

  const guardrails = new Map(
    byKind.GuardrailPolicy.map(({ manifest }) => [manifest.metadata.name, manifest.spec]),
  );
  const cachePolicies = new Map(
    byKind.CachePolicy.map(({ manifest }) => [manifest.metadata.name, manifest.spec]),
  );

  const deployments: Deployment[] = [];
  // model → fallback → where it was first declared (errors name the file and document)
  const fallbacksByModel = new Map<string, Map<string, string>>();
  const leftOutDeployments: LeftOutDeployment[] = [];
  for (const { manifest, where } of byKind.ModelDeployment) {
    const d = compileDeployment(manifest, where, opts, errors, warnings);
    if (d === LEFT_OUT)
      leftOutDeployments.push({
        deployment: manifest.metadata.name,
        model: manifest.spec.model,
        env: manifest.spec.apiKeyEnv ?? '',
      });
    if (!d) continue;
    // Fallbacks are the model's, whichever deployment declares them: one left out here still
    // gives its model the chain every other pod routes by (collected in the same order).
    const fb = fallbacksByModel.get(manifest.spec.model) ?? new Map<string, string>();
    for (const f of manifest.spec.fallbacks ?? []) if (!fb.has(f)) fb.set(f, where);
    fallbacksByModel.set(manifest.spec.model, fb);
    if (d !== LEFT_OUT) deployments.push(d);
  }
  const leftOut = new Set(leftOutDeployments.map((l) => l.model));
  const models = buildModels(deployments, fallbacksByModel, leftOut, errors, warnings);

  const tenants = new Map<string, TenantRecord>();
  for (const { manifest, where } of byKind.Tenant) {
    const t = compileTenant(manifest, where, guardrails, cachePolicies, models, errors, warnings);
    tenants.set(t.name, t);
  }

  const keys = new Map<string, KeyRecord>();
  for (const { manifest, where } of byKind.ApiKey) {
    const k = compileKey(manifest, where, tenants, errors);
    if (!k) continue;
    const hex = k.hash.toString('hex');
    if (keys.has(hex))
      errors.push(`${where}: spec.keyHash: the same key is already used by ${keys.get(hex)?.id}`);
    else keys.set(hex, k);
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    warnings,
    snapshot: {
      version: opts.version,
      source: opts.source,
      loadedAt: opts.now ?? new Date(),
      models,
      keys,
      tenants,
      ...(leftOutDeployments.length > 0 && { leftOut: leftOutDeployments }),
    },
  };
}

interface KindLists {
  ModelDeployment: { manifest: ModelDeployment; where: string }[];
  Tenant: { manifest: Tenant; where: string }[];
  ApiKey: { manifest: ApiKey; where: string }[];
  GuardrailPolicy: { manifest: GuardrailPolicy; where: string }[];
  CachePolicy: { manifest: CachePolicy; where: string }[];
}

function groupByKind(items: readonly LocatedManifest[], errors: string[]): KindLists {
  const lists: KindLists = {
    ModelDeployment: [],
    Tenant: [],
    ApiKey: [],
    GuardrailPolicy: [],
    CachePolicy: [],
  };
  const seen = new Map<string, string>();
  for (const { manifest, where } of items) {
    const id = `${manifest.kind}/${manifest.metadata.name}`;
    const earlier = seen.get(id);
    if (earlier) errors.push(`${where}: metadata.name: ${id} is already defined at ${earlier}`);
    seen.set(id, where);
    (lists[manifest.kind] as { manifest: Manifest; where: string }[]).push({ manifest, where });
  }
  return lists;
}

/** compileDeployment's answer for a deployment left out of this pod's snapshot (unsetEnv). */
const LEFT_OUT = Symbol('left out');

function compileDeployment(
  m: ModelDeployment,
  where: string,
  opts: CompileOptions,
  errors: string[],
  warnings: string[],
): Deployment | typeof LEFT_OUT | undefined {
  const s = m.spec;
  let baseUrl = s.baseUrl ?? DEFAULT_BASE_URL[s.provider];
  if (baseUrl === undefined) {
    errors.push(`${where}: spec.baseUrl: required for provider ${s.provider}`);
    return undefined;
  }
  let apiKey: string | undefined;
  if (s.apiKeyEnv !== undefined && isGatewaySetting(s.apiKeyEnv)) {
    // The key goes to a baseUrl the deployment's author picks: GANTRY_REDIS_PASSWORD there is
    // the Redis password sent upstream, set or not (the fake provider must not mask it either).
    errors.push(`${where}: spec.apiKeyEnv: ${API_KEY_ENV_NOT_ALLOWED} (${s.apiKeyEnv})`);
    return undefined;
  }
  if (s.apiKeyEnv !== undefined) {
    apiKey = opts.env[s.apiKeyEnv];
    if (apiKey === undefined || apiKey === '') {
      if (opts.fakeBaseUrl) {
        baseUrl = opts.fakeBaseUrl(s.provider);
        apiKey = 'fake-key';
        warnings.push(
          `${where}: ${s.apiKeyEnv} is not set; served by the built-in fake provider at ${baseUrl}`,
        );
      } else if (opts.unsetEnv === 'leave-out') {
        warnings.push(
          `${where}: spec.apiKeyEnv: environment variable ${s.apiKeyEnv} is not set in this pod; deployment ${m.metadata.name} is left out, the rest loads`,
        );
        return LEFT_OUT;
      } else {
        errors.push(`${where}: spec.apiKeyEnv: environment variable ${s.apiKeyEnv} is not set`);
        return undefined;
      }
    }
  } else if (s.credentialsSecretRef !== undefined) {
    apiKey = opts.credentials?.get(m.metadata.name);
    if (apiKey === undefined) {
      errors.push(
        opts.credentials
          ? `${where}: spec.credentialsSecretRef: Secret ${s.credentialsSecretRef.name} has no key ${s.credentialsSecretRef.key}`
          : `${where}: spec.credentialsSecretRef: needs the operator; standalone config uses spec.apiKeyEnv`,
      );
      return undefined;
    }
  }
  const capabilities = new Set<Capability>(s.capabilities ?? DEFAULT_CAPABILITIES);
  if (PREFILL_BY_DEFAULT.has(s.provider)) capabilities.add('prefill');
  const totalMs = s.timeoutMs ?? 60_000;
  const retry = compileRetry(s.retry, where, errors);
  const circuitBreaker = compileBreaker(s.circuitBreaker, where, errors);
  return {
    name: m.metadata.name,
    model: s.model,
    provider: s.provider,
    target: {
      provider: s.provider,
      baseUrl: baseUrl.replace(/\/+$/, ''),
      upstreamModel: s.upstreamModel,
      apiKey,
      apiVersion: s.apiVersion,
      prefill: capabilities.has('prefill'),
    },
    weight: s.weight ?? 1,
    priority: s.priority ?? 1,
    region: s.region,
    euResident: s.euResident ?? false,
    pricing: s.pricing,
    capabilities,
    contextWindow: s.contextWindow,
    maxOutputTokens: s.maxOutputTokens,
    timeouts: {
      totalMs,
      connectMs: s.connectTimeoutMs ?? 5_000,
      headersMs: s.headersTimeoutMs ?? totalMs,
      firstTokenMs: s.firstTokenTimeoutMs ?? Math.min(DEFAULT_FIRST_TOKEN_MS, totalMs),
      idleMs: s.streamIdleTimeoutMs ?? 30_000,
    },
    retry,
    circuitBreaker,
    rpm: s.rpm,
    tpm: s.tpm,
  };
}

/**
 * A stream that shows nothing for this long (headers included) is failed over: long enough
 * for a large prompt's prefill, short enough that a hung primary costs well under the
 * request deadline. Reasoning deployments that think before their first token raise it.
 */
const DEFAULT_FIRST_TOKEN_MS = 30_000;

function compileRetry(
  r: ModelDeployment['spec']['retry'],
  where: string,
  errors: string[],
): DeploymentRetry | undefined {
  if (r === undefined) return undefined;
  const backoffMs = r.backoffMs ?? Math.min(100, r.maxBackoffMs ?? Infinity);
  const maxBackoffMs = r.maxBackoffMs ?? Math.max(2_000, backoffMs);
  if (maxBackoffMs < backoffMs)
    errors.push(`${where}: spec.retry.maxBackoffMs: ${maxBackoffMs} is below backoffMs ${backoffMs}`);
  const statuses = r.retryOnStatus ?? TRANSIENT_STATUSES;
  for (const status of statuses)
    if (status !== 429 && status < 500)
      errors.push(
        `${where}: spec.retry.retryOnStatus: ${status} is not transient (only 429 and 5xx are retried)`,
      );
  return {
    attempts: r.attempts,
    backoffMs,
    maxBackoffMs,
    retryOnStatus: new Set(statuses),
    retryOnConnectionError: r.retryOnConnectionError ?? true,
  };
}

function compileBreaker(
  b: ModelDeployment['spec']['circuitBreaker'],
  where: string,
  errors: string[],
): Partial<BreakerConfig> | undefined {
  if (b === undefined) return undefined;
  const out: Partial<BreakerConfig> = {};
  if (b.failureThreshold !== undefined) out.failureThreshold = b.failureThreshold;
  if (b.openMs === undefined && b.maxOpenMs === undefined) return out;
  // Setting one of the two periods keeps the other consistent with it.
  const openMs = b.openMs ?? Math.min(DEFAULT_BREAKER.baseOpenMs, b.maxOpenMs ?? Infinity);
  const maxOpenMs = b.maxOpenMs ?? Math.max(DEFAULT_BREAKER.maxOpenMs, openMs);
  if (maxOpenMs < openMs)
    errors.push(`${where}: spec.circuitBreaker.maxOpenMs: ${maxOpenMs} is below openMs ${openMs}`);
  return { ...out, baseOpenMs: openMs, maxOpenMs };
}

/** `leftOut`: models some deployment of which was left out (unsetEnv), so a fallback to one that none serves now is dropped, not an error. */
function buildModels(
  deployments: Deployment[],
  fallbacksByModel: Map<string, Map<string, string>>,
  leftOut: ReadonlySet<string>,
  errors: string[],
  warnings: string[],
): Map<string, ModelRoute> {
  const grouped = new Map<string, Deployment[]>();
  for (const d of deployments) grouped.set(d.model, [...(grouped.get(d.model) ?? []), d]);
  const models = new Map<string, ModelRoute>();
  for (const [model, list] of grouped) {
    list.sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
    const declared = fallbacksByModel.get(model) ?? new Map<string, string>();
    const fallbacks: string[] = [];
    for (const [f, where] of declared) {
      if (f === model) errors.push(`${where}: spec.fallbacks: a model cannot fall back to itself`);
      else if (grouped.has(f)) fallbacks.push(f);
      else if (leftOut.has(f))
        warnings.push(
          `${where}: spec.fallbacks: ${f} is not served in this pod (its deployments are left out); skipped`,
        );
      else errors.push(`${where}: spec.fallbacks: no ModelDeployment serves ${f}`);
    }
    const capabilities = new Set<Capability>();
    for (const d of list) for (const c of d.capabilities) capabilities.add(c);
    models.set(model, { model, deployments: list, fallbacks, capabilities, ownedBy: list[0]!.provider });
  }
  return models;
}

function compileTenant(
  m: Tenant,
  where: string,
  guardrails: Map<string, GuardrailPolicy['spec']>,
  cachePolicies: Map<string, CachePolicy['spec']>,
  models: Map<string, ModelRoute>,
  errors: string[],
  warnings: string[],
): TenantRecord {
  const s = m.spec;
  const all = s.models.includes('*');
  for (const model of s.models) {
    if (model !== '*' && !models.has(model))
      warnings.push(`${where}: spec.models: no ModelDeployment serves ${model} yet`);
  }
  const guardRef = s.guardrails?.policyRef?.name;
  if (guardRef !== undefined && !guardrails.has(guardRef))
    errors.push(`${where}: spec.guardrails.policyRef: GuardrailPolicy ${guardRef} not found`);
  const cacheRef = s.cache?.policyRef?.name;
  if (cacheRef !== undefined && !cachePolicies.has(cacheRef))
    errors.push(`${where}: spec.cache.policyRef: CachePolicy ${cacheRef} not found`);
  return {
    name: m.metadata.name,
    models: all ? undefined : new Set(s.models),
    spec: s,
    guardrails: guardRef === undefined ? undefined : guardrails.get(guardRef),
    cache: cacheRef === undefined ? undefined : cachePolicies.get(cacheRef),
  };
}

function compileKey(
  m: ApiKey,
  where: string,
  tenants: Map<string, TenantRecord>,
  errors: string[],
): KeyRecord | undefined {
  const s = m.spec;
  if (!tenants.has(s.tenantRef.name)) {
    errors.push(`${where}: spec.tenantRef: Tenant ${s.tenantRef.name} not found`);
    return undefined;
  }
  if (s.keyHash === undefined) {
    errors.push(`${where}: spec.keyHash: required in standalone config (secretRef needs the operator)`);
    return undefined;
  }
  if (s.disabled) return undefined;
  return {
    id: `${m.metadata.namespace ?? 'default'}/${m.metadata.name}`,
    hash: Buffer.from(s.keyHash, 'hex'),
    tenant: s.tenantRef.name,
    models: s.models === undefined ? undefined : new Set(s.models),
    role: s.role ?? 'user',
    spec: s,
  };
}
