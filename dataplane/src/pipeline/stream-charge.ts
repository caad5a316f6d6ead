/**
 * What a relayed stream amounts to, for the client and for the bill. A stream continued on
 * another deployment after a cut has several parts: the client is told the tokens of
 * everything it received, and each part is charged at its own deployment's price for the
 * work that deployment did (a continuation also reads the prompt and the prefix again).
 */
import { costUsd } from '../accounting/cost.ts';
import {
  believableUsage,
  boundedPromptTokens,
  boundedUsage,
  type UsageBounds,
} from '../accounting/reported-usage.ts';
import { estimatePromptTokens, estimateTextTokens } from '../accounting/tokens.ts';
import { THINKING_ALLOWANCE_TOKENS, thinkingAllowance } from '../accounting/thinking.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatCompletion, ChatRequest, Usage } from '../formats/openai/types.ts';
import { chatOutputField } from './validate.ts';
import type { StreamPart } from './stream-relay.ts';

export interface PartCharge {
  deployment: Deployment;
  /** What this deployment is billed for (reported, or counted when it was cut or reported none). */
  usage: Usage;
  costUsd: number;
}

export interface StreamCharge {
  /** What the client is told: its prompt once, and every completion token it received. */
  usage: Usage;
  /** The sum of the parts, exact to the micro-dollar; 0 when the stream is not billed. */
  costUsd: number;
  parts: PartCharge[];
}

/** The request a continuation is asked: the original one with the text so far as prefill. */
export function prefilled(req: ChatRequest, prefix: string): ChatRequest {
  return { ...req, messages: [...req.messages, { role: 'assistant', content: prefix }] };
}

/** Pure: `parts` must not be empty (a replayed cache hit is charged elsewhere). */
export function chargeStream(
  req: ChatRequest,
  parts: readonly StreamPart[],
  billed: boolean,
  /** The gateway's own count of the prompt, when already made. */
  promptTokens: number = estimatePromptTokens(req),
): StreamCharge {
  const charged = parts.map((p): PartCharge => {
    const usage = partUsage(
      req,
      p,
      chatUsageBounds(req, promptTokens, p.deployment, p.text !== '' || p.toolCallText !== ''),
    );
    return { deployment: p.deployment, usage, costUsd: billed ? costUsd(p.deployment.pricing, usage) : 0 };
  });
  const micros = charged.reduce((sum, p) => sum + Math.round(p.costUsd * 1_000_000), 0);
  return { usage: clientUsage(charged), costUsd: micros / 1_000_000, parts: charged };
}

/**
 * A part that finished with the provider's usage is billed on it. A cut part (or one whose
 * provider reported nothing) is billed on the text and tool calls the client received from it, and on the
 * prompt the provider reported when it did so before the cut (Anthropic does, up front).
 */
function partUsage(req: ChatRequest, p: StreamPart, bounds: UsageBounds): Usage {
  // A report no request can have (negative, 1e300 tokens, more than it asked for) counts as none.
  const reported = believableUsage(p.usage);
  const whole = reported && boundedUsage(reported, bounds);
  if (!p.cut && whole) return whole;
  const reportedPrompt = boundedPromptTokens(
    isFinitePrompt(p.usage) ? p.usage.prompt_tokens : undefined,
    bounds,
  );
  const prompt =
    reportedPrompt !== undefined && reportedPrompt > 0
      ? reportedPrompt
      : estimatePromptTokens(p.prefix === '' ? req : prefilled(req, p.prefix));
  const completion = estimateTextTokens(p.text) + estimateTextTokens(p.toolCallText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const isFinitePrompt = (u: Usage | undefined): u is Usage => typeof u?.prompt_tokens === 'number';

/** Re-exported: the allowance is the hold's rule too (accounting/thinking.ts). */
export { THINKING_ALLOWANCE_TOKENS };

/** What a chat request tells about the usage of an answer to it from `deployment`. */
export function chatUsageBounds(
  req: ChatRequest,
  promptTokens: number,
  deployment: Deployment,
  answered: boolean,
): UsageBounds {
  const asked = chatOutputField(req).value;
  // Without the caller's bound the Anthropic adapter sends 4,096 + the budget (36,864 for
  // `xhigh`) whatever the deployment's maxOutputTokens: that limit gets the allowance too.
  // With neither, the unbounded ceiling (above any budget) applies.
  const bound = asked ?? deployment.maxOutputTokens;
  return {
    promptTokens,
    output: {
      maxTokens:
        bound === undefined ? undefined : bound + thinkingAllowance(req.reasoning_effort, deployment),
      sequences: req.n,
    },
    deployment,
    answered,
  };
}

/** Whether a completion has content: a report of no output for it is no report. */
export function hasContent(c: ChatCompletion): boolean {
  return c.choices.some(
    (choice) =>
      (typeof choice.message.content === 'string' && choice.message.content !== '') ||
      (choice.message.tool_calls?.length ?? 0) > 0,
  );
}

function clientUsage(parts: readonly PartCharge[]): Usage {
  const [first] = parts;
  if (!first) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  if (parts.length === 1) return first.usage;
  const prompt = first.usage.prompt_tokens;
  const completion = parts.reduce((sum, p) => sum + p.usage.completion_tokens, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The model ids that served, in order, once each: one id unless a fallback model continued. */
export function servedModels(parts: readonly { deployment: Deployment }[]): string {
  return [...new Set(parts.map((p) => p.deployment.model))].join(',');
}
