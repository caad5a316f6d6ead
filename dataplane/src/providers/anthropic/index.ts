/** The Anthropic Messages API adapter: translation only, the pipeline does the HTTP. */
import type { ProviderAdapter } from '../types.ts';
import { classifyAnthropicError } from './errors.ts';
import { buildAnthropicRequest } from './request.ts';
import { toChatCompletion } from './response.ts';
import { AnthropicStreamTranslator } from './stream.ts';

export const anthropicAdapter: ProviderAdapter = {
  kind: 'anthropic',
  chat: {
    request: (req, target) => buildAnthropicRequest(req, target),
    response: (body) => toChatCompletion(body),
    stream: (_target, ctx) => new AnthropicStreamTranslator(ctx),
  },
  error: (status, headers, body) => classifyAnthropicError(status, headers, body),
};

export {
  ANTHROPIC_VERSION,
  DEFAULT_MAX_TOKENS,
  REASONING_BUDGETS,
  clampTemperature,
  toAnthropicBody,
  buildAnthropicRequest,
} from './request.ts';
export { toChatCompletion, finishReason, toUsage } from './response.ts';
export { AnthropicStreamTranslator } from './stream.ts';
export { classifyAnthropicError, kindOfErrorType, retryAfterMs } from './errors.ts';
export { parseDataUrl } from './content.ts';
