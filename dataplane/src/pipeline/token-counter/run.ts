/**
 * `POST /v1/utils/token_counter` (LiteLLM's utility route): how many prompt tokens a chat
 * request (or a bare prompt) is, counted with the tokenizer Gantry budgets with, so a caller
 * can trim a conversation before sending it. Nothing is called upstream and nothing is
 * charged; the call still passes the key's model permission and request rate limit, and is
 * recorded (with zero tokens: counting is not consumption).
 */
import { estimatePromptTokens, estimateTextTokens } from '../../accounting/tokens.ts';
import type { ChatMessage, ChatRequest } from '../../formats/openai/types.ts';
import { accessibleRoute, type RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { admitRead, settleRead } from '../read-admission.ts';

export interface TokenCountRequest {
  model: string;
  prompt?: string | undefined;
  messages?: ChatMessage[] | undefined;
  tools?: ChatRequest['tools'];
}

export interface TokenCountResponse {
  total_tokens: number;
  request_model: string;
  /** The provider's model name the first deployment of the model calls. */
  model_used: string;
  tokenizer_type: 'openai_tokenizer';
  /** Which encoding counted: the same one the budget estimate uses. */
  tokenizer: 'o200k_base';
}

/** Messages (with their per-message overhead and tools) when given; else the bare prompt. */
export function countRequestTokens(req: TokenCountRequest): number {
  if (req.messages)
    return estimatePromptTokens({
      model: req.model,
      messages: req.messages,
      ...(req.tools && { tools: req.tools }),
    });
  return estimateTextTokens(req.prompt ?? '');
}

export async function runTokenCount(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: TokenCountRequest,
): Promise<TokenCountResponse> {
  Object.assign(ctx.usage, { endpoint: 'token_counter', requestedModel: req.model, stream: false });
  const route = accessibleRoute(ctx, req.model);
  // Only the request count of the rate limit applies: no tokens are spent, no money held.
  await admitRead(deps, ctx, 'token_counter', req.model);
  const total = countRequestTokens(req);
  await settleRead(deps, ctx);
  return {
    total_tokens: total,
    request_model: req.model,
    model_used: route.deployments[0]?.target.upstreamModel ?? req.model,
    tokenizer_type: 'openai_tokenizer',
    tokenizer: 'o200k_base',
  };
}
