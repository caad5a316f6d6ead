/**
 * Where Realtime guardrail verdicts are recorded, as HTTP's are: a refused event is a usage
 * record of its own (status and type of the refusal, nothing charged), so the security
 * analytics count it; findings in text that was forwarded (flagged or redacted) ride on the
 * next response's record, the request that read that text.
 */
import type { GuardrailVerdictSummary } from '../accounting/usage.ts';
import type { GatewayError } from '../errors.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { PipelineDeps } from '../pipeline/forward.ts';
import { settle } from '../pipeline/settlement.ts';

const RANK = { allow: 0, flag: 1, redact: 2, block: 3 } as const;

/** Two verdicts as one: the graver action, every finding. */
export function withVerdict(
  a: GuardrailVerdictSummary | undefined,
  b: GuardrailVerdictSummary | undefined,
): GuardrailVerdictSummary | undefined {
  if (!a || !b) return a ?? b;
  return {
    action: RANK[a.action] >= RANK[b.action] ? a.action : b.action,
    findings: [...a.findings, ...b.findings],
  };
}

/** `ctx` is a fresh response context (hold.ts `responseContext`): nothing held, nothing to settle but the record. */
export function recordBlocked(
  deps: PipelineDeps,
  ctx: RequestContext,
  error: GatewayError,
  verdict: GuardrailVerdictSummary | undefined,
): void {
  ctx.usage.guardrails = verdict;
  void settle(deps, ctx, { status: error.status, errorType: error.type, costUsd: 0 }).catch((err: unknown) =>
    ctx.log.warn({ err: String(err) }, 'realtime refusal record failed'),
  );
}
