/**
 * Runs the four detectors over every text a model will read and turns their findings into
 * one verdict under the tenant's policy. Pure: request and policy in, verdict out.
 *
 * Which checks see which text:
 *   prompt-injection  user messages and tool results — the untrusted input. System and
 *                     developer prompts are the operator's own instructions (they often
 *                     say "never reveal your system prompt"), and assistant turns and tool
 *                     calls are the model's own words.
 *   toxicity          everything but system/developer prompts.
 *   pii, secrets      everything: system prompts, tool-call arguments and tool
 *                     descriptions leak to the provider just the same.
 * The verdict action is the most severe one among checks with a finding at or above their
 * threshold: block > redact > flag > allow. The summary never carries matched text.
 */
import type { GuardrailPolicySpec } from '@gantry/crds';
import { GatewayError } from '../../errors.ts';
import type { ChatMessage, ChatRequest } from '../../formats/openai/types.ts';
import { detect as detectInjection } from './injection.ts';
import { SCAN_MEMO } from './memo.ts';
import { prepare } from './normalize.ts';
import { detect as detectPii } from './pii.ts';
import { resolvePolicy, type GuardAction, type ResolvedPolicy } from './policy.ts';
import { Redactor } from './redact.ts';
import { detect as detectSecrets } from './secrets.ts';
import { detect as detectToxicity } from './toxicity.ts';
import { GuardrailNames, type Detector, type Finding, type GuardrailName, type TextPrep } from './types.ts';

export type VerdictAction = 'allow' | 'block' | 'redact' | 'flag';

export interface FindingSummary {
  guardrail: GuardrailName;
  category: string;
  count: number;
  maxScore: number;
}

export interface Verdict {
  action: VerdictAction;
  /** Findings at or above threshold, grouped; empty when nothing fired. */
  findings: FindingSummary[];
  /** For `block`: the highest-scoring finding among blocking checks, for the 403 body. */
  blockedBy?: { guardrail: GuardrailName; category: string };
}

export interface RequestVerdict extends Verdict {
  /** For `redact`: a copy of the request with placeholders in place of the spans. */
  redactedRequest?: ChatRequest;
}

export interface TextVerdict extends Verdict {
  redactedText?: string;
}

/**
 * The most text one request may ask the guardrails to read: 8 Mi characters, about two
 * million tokens, beyond any model's context window. The scan is synchronous and linear, but
 * at up to ~1 ms of CPU per KB on hostile shapes (benign text ~0.04; the bench's
 * guardrail-scan section measures the worst case) a 32 MiB body of text would hold the event
 * loop for half a minute; a request past the bound is refused before any scan (413, naming it).
 */
export const MAX_SCANNED_CHARS = 8 * 1024 * 1024;

const DETECTORS: Record<GuardrailName, Detector> = {
  'prompt-injection': detectInjection,
  toxicity: detectToxicity,
  pii: detectPii,
  secrets: detectSecrets,
};

type Source = ChatMessage['role'] | 'function' | 'tool_call' | 'tool_definition';

function appliesTo(name: GuardrailName, source: Source): boolean {
  if (name === 'prompt-injection') return source === 'user' || source === 'tool' || source === 'function';
  if (name === 'toxicity')
    return source !== 'system' && source !== 'developer' && source !== 'tool_definition';
  return true;
}

/** Where a text sits in the request, so its redacted form can be written into a copy. */
type Place =
  | { kind: 'content' | 'reasoning'; msg: number }
  | { kind: 'part' | 'tool_call'; msg: number; at: number }
  | { kind: 'tool_definition'; at: number };

/** A text the model will read. Plain data, no closures: this runs for every request. */
interface TextRef {
  source: Source;
  text: string;
  place: Place;
}

function texts(req: ChatRequest): TextRef[] {
  const refs: TextRef[] = [];
  for (let i = 0; i < req.messages.length; i++) {
    const msg = req.messages[i] as ChatMessage;
    const source = msg.role as Source;
    if (typeof msg.content === 'string') {
      refs.push({ source, text: msg.content, place: { kind: 'content', msg: i } });
    } else if (Array.isArray(msg.content)) {
      msg.content.forEach((part, j) => {
        if (part.type === 'text' && typeof part.text === 'string')
          refs.push({ source, text: part.text, place: { kind: 'part', msg: i, at: j } });
      });
    }
    if (typeof msg.reasoning_content === 'string')
      refs.push({ source, text: msg.reasoning_content, place: { kind: 'reasoning', msg: i } });
    msg.tool_calls?.forEach((call, j) => {
      refs.push({
        source: 'tool_call',
        text: call.function.arguments,
        place: { kind: 'tool_call', msg: i, at: j },
      });
    });
  }
  req.tools?.forEach((tool, k) => {
    const description = tool.function.description;
    if (typeof description === 'string')
      refs.push({ source: 'tool_definition', text: description, place: { kind: 'tool_definition', at: k } });
  });
  return refs;
}

/** Writes `value` where `place` points in `r` (a copy of the scanned request). */
function write(r: ChatRequest, place: Place, value: string): void {
  if (place.kind === 'tool_definition') {
    const target = r.tools?.[place.at];
    if (target) target.function.description = value;
    return;
  }
  const message = r.messages[place.msg] as ChatMessage;
  switch (place.kind) {
    case 'content':
      message.content = value;
      return;
    case 'reasoning':
      message.reasoning_content = value;
      return;
    case 'part': {
      const parts = message.content;
      if (Array.isArray(parts) && parts[place.at]) (parts[place.at] as { text: string }).text = value;
      return;
    }
    case 'tool_call': {
      const target = message.tool_calls?.[place.at];
      if (target) target.function.arguments = value;
      return;
    }
  }
}

function enabled(policy: ResolvedPolicy, only: ReadonlySet<GuardrailName> | undefined): GuardrailName[] {
  return GuardrailNames.filter((n) => policy.checks[n].action !== 'off' && (!only || only.has(n)));
}

/** Findings of one text that count under the policy (threshold, PII entity filter). */
function findingsFor(
  text: string,
  source: Source,
  names: GuardrailName[],
  policy: ResolvedPolicy,
  scope: string | undefined,
): Finding[] {
  const out: Finding[] = [];
  const remembered = scope === undefined ? undefined : SCAN_MEMO.lookup(text, scope);
  // Injection and toxicity both look for disguises and use the learned scores; the shared
  // preparation does that work once per text, and only when some detector has to run.
  let prep: TextPrep | undefined;
  for (const name of names) {
    if (!appliesTo(name, source)) continue;
    const { threshold } = policy.checks[name];
    let found = remembered?.[name];
    if (!found) {
      found = DETECTORS[name](text, (prep ??= prepare(text)));
      if (remembered) remembered[name] = found;
    }
    for (const f of found) {
      if (f.score < threshold) continue;
      if (name === 'pii' && policy.piiEntities && !policy.piiEntities.has(f.category)) continue;
      out.push(f);
    }
  }
  return out;
}

const SEVERITY: Record<VerdictAction, number> = { allow: 0, flag: 1, redact: 2, block: 3 };

function actionOf(a: GuardAction): VerdictAction {
  return a === 'off' ? 'allow' : a;
}

function summarise(all: Finding[], policy: ResolvedPolicy): Verdict {
  let action: VerdictAction = 'allow';
  let blocker: Finding | undefined;
  const groups = new Map<string, FindingSummary>();
  for (const f of all) {
    const a = actionOf(policy.checks[f.guardrail].action);
    if (SEVERITY[a] > SEVERITY[action]) action = a;
    if (a === 'block' && (!blocker || f.score > blocker.score)) blocker = f;
    const key = `${f.guardrail}\u0000${f.category}`;
    const g = groups.get(key);
    const score = Math.round(f.score * 100) / 100;
    if (g) {
      g.count++;
      g.maxScore = Math.max(g.maxScore, score);
    } else groups.set(key, { guardrail: f.guardrail, category: f.category, count: 1, maxScore: score });
  }
  const verdict: Verdict = { action, findings: [...groups.values()] };
  if (blocker) verdict.blockedBy = { guardrail: blocker.guardrail, category: blocker.category };
  return verdict;
}

function toRedact(findings: Finding[], policy: ResolvedPolicy): Finding[] {
  return findings.filter((f) => policy.checks[f.guardrail].action === 'redact');
}

/**
 * Scans a chat request. `policy` is the tenant's GuardrailPolicy spec (undefined: defaults,
 * see policy.ts); `only` is the set from `x-gantry-guard` (undefined: all checks). With a
 * `scope` (the tenant), texts this scope sent recently reuse their findings (memo.ts): the
 * verdict is the same, the history of a conversation is not scanned again every turn.
 */
export function scanRequest(
  req: ChatRequest,
  policy: GuardrailPolicySpec | ResolvedPolicy | undefined,
  only?: ReadonlySet<GuardrailName>,
  scope?: string,
): RequestVerdict {
  const resolved = isResolved(policy) ? policy : resolvePolicy(policy);
  const names = enabled(resolved, only);
  if (names.length === 0) return { action: 'allow', findings: [] };
  const refs = texts(req);
  let chars = 0;
  for (const ref of refs) chars += ref.text.length;
  if (chars > MAX_SCANNED_CHARS)
    throw new GatewayError(
      'request_too_large',
      `messages: ${chars} characters of text; the guardrails read at most ${MAX_SCANNED_CHARS} per request (about two million tokens, beyond any model's context window)`,
      { param: 'messages' },
    );
  const perText = refs.map((ref) => findingsFor(ref.text, ref.source, names, resolved, scope));
  const verdict: RequestVerdict = summarise(perText.flat(), resolved);
  if (verdict.action === 'redact') {
    const copy = structuredClone(req);
    const redactor = new Redactor();
    refs.forEach((ref, i) => {
      const spans = toRedact(perText[i] ?? [], resolved);
      if (spans.length > 0) write(copy, ref.place, redactor.apply(ref.text, spans));
    });
    verdict.redactedRequest = copy;
  }
  return verdict;
}

/**
 * Scans one text, e.g. a non-streaming response. `source` picks which checks apply the way
 * a message role does in a request; model output defaults to 'assistant', which leaves out
 * prompt injection (a model explaining an attack is not attacking itself).
 */
export function scanText(
  text: string,
  policy: GuardrailPolicySpec | ResolvedPolicy | undefined,
  only?: ReadonlySet<GuardrailName>,
  source: 'assistant' | 'user' | 'tool' = 'assistant',
): TextVerdict {
  const resolved = isResolved(policy) ? policy : resolvePolicy(policy);
  const names = enabled(resolved, only);
  if (names.length === 0) return { action: 'allow', findings: [] };
  const findings = findingsFor(text, source, names, resolved, undefined);
  const verdict: TextVerdict = summarise(findings, resolved);
  if (verdict.action === 'redact')
    verdict.redactedText = new Redactor().apply(text, toRedact(findings, resolved));
  return verdict;
}

function isResolved(p: GuardrailPolicySpec | ResolvedPolicy | undefined): p is ResolvedPolicy {
  return p !== undefined && 'checks' in p;
}
