/** Guardrails stage: the pure core. The HTTP pipeline wires `scanRequest` in front of the cache. */
export {
  scanRequest,
  scanText,
  type FindingSummary,
  type RequestVerdict,
  type TextVerdict,
  type Verdict,
  type VerdictAction,
} from './scan.ts';
export { parseGuardHeader, type GuardSelection } from './header.ts';
export {
  DEFAULT_POLICY,
  DEFAULT_THRESHOLD,
  resolvePolicy,
  type CheckPolicy,
  type GuardAction,
  type ResolvedPolicy,
} from './policy.ts';
export { GuardrailNames, type Finding, type GuardrailName } from './types.ts';
export { detect as detectInjection } from './injection.ts';
export { detect as detectToxicity } from './toxicity.ts';
export { detect as detectPii, PiiKinds, type PiiKind } from './pii.ts';
export { detect as detectSecrets } from './secrets.ts';
