/** Google Gemini API (generativelanguage v1beta): chat and embeddings. */
import type { ProviderAdapter } from '../types.ts';
import { geminiEmbeddings } from './embeddings.ts';
import { classifyError } from './errors.ts';
import { chatRequest } from './request.ts';
import { chatResponse } from './response.ts';
import { chatStream } from './stream.ts';

export const geminiAdapter: ProviderAdapter = {
  kind: 'gemini',
  chat: {
    request: chatRequest,
    response: chatResponse,
    stream: (_target, ctx) => chatStream(ctx),
  },
  embeddings: geminiEmbeddings,
  error: classifyError,
};

export { THINKING_BUDGETS, toGeminiRequest } from './request.ts';
export { cleanSchema, GEMINI_SCHEMA_KEYS } from './schema.ts';
export { SKIP_THOUGHT_SIGNATURE } from './messages.ts';
