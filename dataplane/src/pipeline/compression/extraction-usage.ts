/**
 * What the extraction call is billed for. It is a chat call like the answer, so its usage is
 * held to the same bounds: a believable report cut at the call's `max_tokens` and the
 * deployment's context window (a corrupt 1e9 output tokens charged $600 against a $0.0012
 * hold), and no report, or a report of nothing for an answer with content, bills the gateway's
 * own count rather than $0.
 */
import { costUsd } from '../../accounting/cost.ts';
import { boundedUsage } from '../../accounting/reported-usage.ts';
import { estimatedUsage, estimatePromptTokens } from '../../accounting/tokens.ts';
import type { Deployment } from '../../config/snapshot.ts';
import type { ChatCompletion, ChatRequest, Usage } from '../../formats/openai/types.ts';
import { chatUsageBounds, hasContent } from '../stream-charge.ts';

export function extractionUsage(
  xreq: ChatRequest,
  deployment: Deployment,
  answer: ChatCompletion,
): { usage: Usage; costUsd: number } {
  const bounds = chatUsageBounds(xreq, estimatePromptTokens(xreq), deployment, hasContent(answer));
  const usage =
    (answer.usage && boundedUsage(answer.usage, bounds)) ??
    estimatedUsage(xreq, answer.choices[0]?.message.content ?? '');
  return { usage, costUsd: costUsd(deployment.pricing, usage) };
}
