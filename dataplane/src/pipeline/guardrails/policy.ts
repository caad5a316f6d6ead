/**
 * Turns a tenant's GuardrailPolicy spec into one action and threshold per check.
 *
 * Defaults, used for a check the policy leaves out and for a tenant with no policy at all
 * (guardrails are the first layer of every request, so "no policy" is not "no checks"):
 *   prompt-injection  block   0.5   an attack on the model; forwarding it is the harm
 *   secrets           redact  0.5   the request still works, the key never leaves
 *   pii               flag    0.5   all entity kinds; recorded, forwarded unchanged
 *   toxicity          flag    0.5   recorded; blocking is a product choice per tenant
 *   scanResponses     false
 *   allowRequestOptOut true (SPEC.md: the guard header may turn checks off per request)
 * `action: off` disables a check. `redact` has no meaning for prompt injection (removing
 * the span leaves the rest of the attack), so there it acts as `block`.
 */
import type { GuardrailPolicySpec } from '@gantry/crds';
import type { GuardrailName } from './types.ts';

export type GuardAction = 'block' | 'redact' | 'flag' | 'off';

export interface CheckPolicy {
  action: GuardAction;
  threshold: number;
}

export interface ResolvedPolicy {
  checks: Record<GuardrailName, CheckPolicy>;
  /** PII entity kinds acted on; undefined means every kind the detector knows. */
  piiEntities: ReadonlySet<string> | undefined;
  scanResponses: boolean;
  /** false: a request may not skip any active check with the guard header. */
  allowRequestOptOut: boolean;
}

export const DEFAULT_THRESHOLD = 0.5;

export const DEFAULT_POLICY: ResolvedPolicy = {
  checks: {
    'prompt-injection': { action: 'block', threshold: DEFAULT_THRESHOLD },
    toxicity: { action: 'flag', threshold: DEFAULT_THRESHOLD },
    pii: { action: 'flag', threshold: DEFAULT_THRESHOLD },
    secrets: { action: 'redact', threshold: DEFAULT_THRESHOLD },
  },
  piiEntities: undefined,
  scanResponses: false,
  allowRequestOptOut: true,
};

function check(
  spec: { action: GuardAction; threshold?: number } | undefined,
  fallback: CheckPolicy,
  redactAs: GuardAction = 'redact',
): CheckPolicy {
  if (!spec) return fallback;
  const action = spec.action === 'redact' ? redactAs : spec.action;
  return { action, threshold: spec.threshold ?? DEFAULT_THRESHOLD };
}

export function resolvePolicy(spec: GuardrailPolicySpec | undefined): ResolvedPolicy {
  if (!spec) return DEFAULT_POLICY;
  const d = DEFAULT_POLICY.checks;
  return {
    checks: {
      'prompt-injection': check(spec.promptInjection, d['prompt-injection'], 'block'),
      toxicity: check(spec.toxicity, d.toxicity),
      pii: check(spec.pii, d.pii),
      secrets: check(spec.secrets, d.secrets),
    },
    piiEntities: spec.pii?.entities ? new Set(spec.pii.entities.map((e) => e.toUpperCase())) : undefined,
    scanResponses: spec.scanResponses ?? DEFAULT_POLICY.scanResponses,
    allowRequestOptOut: spec.allowRequestOptOut ?? DEFAULT_POLICY.allowRequestOptOut,
  };
}
