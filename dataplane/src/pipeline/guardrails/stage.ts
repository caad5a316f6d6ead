/**
 * The guardrails stage: the first layer of every chat completion and Messages call. Scans
 * every text the model will read; blocks (403, naming guardrail and category, never echoing
 * the text), redacts (forwards placeholders) or flags (forwards and records).
 */
import type { TenantRecord } from '../../config/snapshot.ts';
import { RequestHeaders } from '../../brand.ts';
import { GatewayError } from '../../errors.ts';
import type { ChatCompletion, ChatRequest } from '../../formats/openai/types.ts';
import type { GuardrailVerdictSummary } from '../../accounting/usage.ts';
import type { RequestContext } from '../context.ts';
import { parseGuardHeader, skippedChecks } from './header.ts';
import { resolvePolicy, type ResolvedPolicy } from './policy.ts';
import { scanRequest, scanText, type Verdict } from './scan.ts';
import { GuardrailNames, type GuardrailName } from './types.ts';

const resolved = new WeakMap<TenantRecord, ResolvedPolicy>();

/** Resolved once per tenant record, i.e. once per config snapshot. */
function policyOf(tenant: TenantRecord): ResolvedPolicy {
  let p = resolved.get(tenant);
  if (!p) resolved.set(tenant, (p = resolvePolicy(tenant.guardrails)));
  return p;
}

/** Which checks this request runs: undefined = the policy's; an empty set = none. */
function selection(ctx: RequestContext): ReadonlySet<GuardrailName> | undefined {
  const header = ctx.requestHeaders[RequestHeaders.guard];
  const parsed = parseGuardHeader(typeof header === 'string' ? header : undefined);
  const policy = policyOf(ctx.tenant);
  if (!policy.allowRequestOptOut) {
    const active = GuardrailNames.filter((name) => policy.checks[name].action !== 'off');
    const skipped = skippedChecks(parsed, active);
    if (skipped.length > 0) throw optOutRefused(ctx.tenant, skipped);
  }
  switch (parsed.kind) {
    case 'all':
      return undefined;
    case 'none':
      return new Set();
    case 'only':
      return parsed.names;
    case 'invalid':
      throw new GatewayError(
        'invalid_request_error',
        `${RequestHeaders.guard}: unknown guardrail "${parsed.name}"; use none or a comma list of ${GuardrailNames.join(', ')}`,
        { param: RequestHeaders.guard },
      );
  }
}

/**
 * The checks a tenant's policy runs that no request may turn off: empty unless the policy sets
 * `allowRequestOptOut: false`. Text the gateway cannot scan (Realtime audio) is refused for them.
 */
export function compulsoryChecks(tenant: TenantRecord): GuardrailName[] {
  const policy = policyOf(tenant);
  if (policy.allowRequestOptOut) return [];
  return GuardrailNames.filter((name) => policy.checks[name].action !== 'off');
}

/**
 * Whether a request by `ctx` has any text scanned: false when the policy turns every check off
 * or the guard header opts out of all that are on. A selection the policy refuses counts as
 * scanning (the caller is about to be refused; nothing is waived for it).
 */
export function scansText(ctx: RequestContext): boolean {
  const policy = policyOf(ctx.tenant);
  let only: ReadonlySet<GuardrailName> | undefined;
  try {
    only = selection(ctx);
  } catch {
    return true;
  }
  return GuardrailNames.some((name) => policy.checks[name].action !== 'off' && (!only || only.has(name)));
}

function optOutRefused(tenant: TenantRecord, skipped: readonly GuardrailName[]): GatewayError {
  const policy = tenant.spec.guardrails?.policyRef?.name ?? '?';
  return new GatewayError(
    'permission_denied',
    `${RequestHeaders.guard}: GuardrailPolicy ${policy} of tenant ${tenant.name} does not allow turning off guardrails per request (this request would skip ${skipped.join(', ')})`,
    { param: RequestHeaders.guard },
  );
}

function summary(v: Verdict): GuardrailVerdictSummary {
  return {
    action: v.action,
    findings: v.findings.map(({ guardrail, category, count }) => ({ guardrail, category, count })),
  };
}

function blocked(v: Verdict, what: string): GatewayError {
  const by = v.blockedBy ?? v.findings[0];
  return new GatewayError(
    'guardrail_blocked',
    `${what} blocked by the ${by?.guardrail ?? 'security'} guardrail (category: ${by?.category ?? 'unknown'})`,
  );
}

export function guardRequest(ctx: RequestContext, req: ChatRequest): ChatRequest {
  const only = selection(ctx);
  if (only?.size === 0) return req;
  // Scoped by tenant: a conversation's history is scanned once, not on every turn.
  const verdict = scanRequest(req, policyOf(ctx.tenant), only, ctx.tenant.name);
  if (verdict.findings.length > 0) ctx.usage.guardrails = summary(verdict);
  if (verdict.action === 'block') throw blocked(verdict, 'request');
  return verdict.action === 'redact' && verdict.redactedRequest ? verdict.redactedRequest : req;
}

/** Non-streaming answers, when the tenant's policy asks for response scanning. */
export function guardResponse(ctx: RequestContext, completion: ChatCompletion): ChatCompletion {
  const policy = policyOf(ctx.tenant);
  if (!policy.scanResponses) return completion;
  const only = selection(ctx);
  if (only?.size === 0) return completion;
  let out = completion;
  for (const [i, choice] of completion.choices.entries()) {
    const text = choice.message.content;
    if (!text) continue;
    const verdict = scanText(text, policy, only);
    if (verdict.findings.length === 0) continue;
    ctx.usage.guardrails = mergeSummaries(ctx.usage.guardrails, summary(verdict));
    if (verdict.action === 'block') throw blocked(verdict, 'response');
    if (verdict.action === 'redact' && verdict.redactedText !== undefined) {
      const choices = [...out.choices];
      choices[i] = { ...choice, message: { ...choice.message, content: verdict.redactedText } };
      out = { ...out, choices };
    }
  }
  return out;
}

const RANK = { allow: 0, flag: 1, redact: 2, block: 3 } as const;

function mergeSummaries(
  a: GuardrailVerdictSummary | undefined,
  b: GuardrailVerdictSummary,
): GuardrailVerdictSummary {
  if (!a) return b;
  return {
    action: RANK[a.action] >= RANK[b.action] ? a.action : b.action,
    findings: [...a.findings, ...b.findings],
  };
}
