/**
 * Over the limit, which edits may wait at their previous version. An edit that only gives more
 * (a model added, a price lowered, a limit raised) can wait for room: the previous version
 * serves less, never more. Any other edit may take something away (a price raised, a limit
 * added or lowered, a model narrowed) and applies at once, or its object goes out until it
 * fits: its previous version would undercharge, or leave a limit unenforced, meanwhile.
 */
import type { ModelDeploymentSpec, TenantSpec } from '@gantry/crds';

export const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Key order is not meaning: compare objects whatever order their fields were written in. */
export const sortedKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortedKeys)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, x]) => [k, sortedKeys(x)]),
        )
      : v;

const equal = (a: unknown, b: unknown): boolean => sameJson(sortedKeys(a ?? null), sortedKeys(b ?? null));

/**
 * A tenant edit that can only give more: models added (or '*' gained) and/or the wallet's
 * balance raised, nothing else touched. Anything else (a model or '*' taken away, a wallet
 * added, removed or lowered, a guardrail, cache or routing change) is judged as possibly taking
 * something away: telling tightening from loosening field by field would have to follow every
 * later field added to the schema, so only these two are known to loosen.
 */
export function tenantLoosensOnly(was: TenantSpec, is: TenantSpec): boolean {
  const { models: before, wallet: walletWas, ...restWas } = was;
  const { models: after, wallet: walletIs, ...restIs } = is;
  if (!equal(restWas, restIs)) return false;
  if (!walletLoosens(walletWas, walletIs)) return false;
  if (after.includes('*')) return true;
  if (before.includes('*')) return false;
  const now = new Set(after);
  return before.every((m) => now.has(m));
}

/** No wallet on either side, or the same wallet with a balance at least as high. */
const walletLoosens = (was: TenantSpec['wallet'], is: TenantSpec['wallet']): boolean => {
  if (was === undefined || is === undefined) return was === is;
  const { balanceUsd: a, ...restWas } = was;
  const { balanceUsd: b, ...restIs } = is;
  return b >= a && equal(restWas, restIs);
};

type Spec = ModelDeploymentSpec;
/** Whether a field's change can wait: true when the new value takes nothing away. */
type Rule<K extends keyof Spec> = (was: Spec[K], is: Spec[K]) => boolean;

/** Any change may take something away. */
const unchanged = (was: unknown, is: unknown): boolean => equal(was, is);
/** Nothing a tenant is promised or charged: serving the previous value a while longer is harmless. */
const anyChange = (): boolean => true;
/** A limit, absent meaning none: removing or raising it loosens; adding or lowering it does not. */
const limit = (was: number | undefined, is: number | undefined): boolean =>
  is === undefined || (was !== undefined && is >= was);
/** Only entries appended: the routes tried before, in the same order, then new ones. */
const appended = (was: string[] | undefined, is: string[] | undefined): boolean =>
  (was ?? []).every((f, i) => (is ?? [])[i] === f);

/**
 * Each price no higher, and the same prices set. An absent price is not simply zero: a cached
 * or audio rate falls back to the text rate, a fine-tuning job without its deployment's
 * training price is charged the dearest of the others, and a unit price decides which
 * deployment estimates a request. So a price added or removed (pricing included) applies now.
 */
const prices = (was: Spec['pricing'], is: Spec['pricing']): boolean => {
  if (was === undefined || is === undefined) return was === is;
  const before = was as Record<string, number | undefined>;
  const after = is as Record<string, number | undefined>;
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const n of names) {
    const a = before[n];
    const b = after[n];
    if (a === undefined || b === undefined) {
      if (a !== b) return false;
    } else if (b > a) return false;
  }
  return true;
};

/**
 * Every field of the spec, judged. Typed over the spec's keys, so a field added to the schema
 * fails to type-check until someone decides whether its change may wait.
 */
export const DEPLOYMENT_RULES: { [K in keyof Spec]-?: Rule<K> } = {
  // What is sent where: the target (baseUrl, provider, credential) is applied before this
  // judgement even runs; the model ids and region decide which requests go there.
  model: unchanged,
  provider: unchanged,
  upstreamModel: unchanged,
  baseUrl: unchanged,
  apiKeyEnv: unchanged,
  credentialsSecretRef: unchanged,
  region: unchanged,
  // The data plane routes no traffic by it: the flag is recorded on each usage record (and
  // counted in EU-request totals), which a residency report reads. Marking it can wait (the old
  // records only under-claim); clearing it applies now, or records keep claiming EU residency.
  euResident: (was, is) => was !== true || is === true,
  pricing: prices,
  // Absent is the data plane's default set: only a list that keeps every entry can wait.
  capabilities: (was, is) =>
    was === undefined || is === undefined ? was === is : was.every((c) => is.includes(c)),
  // The order is the order of failover: a fallback taken away, or moved behind another, is an
  // expensive, compromised or non-EU route someone is steering away from. Only one appended
  // (tried after all the old ones) gives more and can wait.
  fallbacks: appended,
  // Billing caps, not only limits: reported usage is cut to contextWindow for the prompt, and to
  // maxOutputTokens for output when the request sets no max_tokens (the hold is estimated from
  // it too). The old, lower cap would keep undercharging a raised one, so any change applies now.
  contextWindow: unchanged,
  maxOutputTokens: unchanged,
  // Not compiled into the data plane's deployment: nothing enforces them yet (the CRD says so).
  // Judged as the limits they are meant to be, so the rule is right the day they are enforced.
  rpm: limit,
  tpm: limit,
  apiVersion: anyChange,
  // Routing weights: 0 drains a deployment, and any other change shifts traffic between
  // upstreams (away from an expensive or failing one). Draining a compromised upstream must not
  // wait behind size, and a number grows the JSON by a few bytes at most: any change applies now.
  weight: unchanged,
  // Which deployment is tried first, and which model a file or batch request without a model
  // goes to (the lowest priority wins): a change moves traffic, and uploads, elsewhere. Like
  // weight, a few bytes, applied now.
  priority: unchanged,
  timeoutMs: anyChange,
  connectTimeoutMs: anyChange,
  headersTimeoutMs: anyChange,
  firstTokenTimeoutMs: anyChange,
  streamIdleTimeoutMs: anyChange,
  retry: anyChange,
  circuitBreaker: anyChange,
};

/**
 * The fields of a ModelDeployment edit that may take something away (a price raised, a limit
 * added or lowered, a billing cap changed, a capability or fallback removed, traffic steered by
 * weight, priority or fallback order, the model or residency changed): empty when the edit may
 * wait at its previous version.
 */
export function deploymentTightenings(was: Spec, is: Spec): (keyof Spec)[] {
  const out: (keyof Spec)[] = [];
  for (const field of Object.keys(DEPLOYMENT_RULES) as (keyof Spec)[]) {
    const rule = DEPLOYMENT_RULES[field] as (a: unknown, b: unknown) => boolean;
    if (!equal(was[field], is[field]) && !rule(was[field], is[field])) out.push(field);
  }
  // A field the rules do not know (an older or newer schema's) may mean anything.
  const a = was as Record<string, unknown>;
  const b = is as Record<string, unknown>;
  for (const field of new Set([...Object.keys(a), ...Object.keys(b)]))
    if (!(field in DEPLOYMENT_RULES) && !equal(a[field], b[field])) out.push(field as keyof Spec);
  return out;
}
