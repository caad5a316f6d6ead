import type { ProviderAdapter } from '../types.ts';
import { classifyOpenAIError } from './errors.ts';
import { openaiMediaAdapter } from './media.ts';
import { chatRequest, completionsRequest, embeddingsRequest } from './request.ts';
import { chatResponse, completionsResponse, embeddingsResponse } from './response.ts';
import { completionsStreamEvent, OpenAIStreamTranslator } from './stream.ts';

const adapter = (kind: 'openai' | 'openai-compatible' | 'azure-openai'): ProviderAdapter => ({
  kind,
  chat: {
    request: chatRequest,
    response: chatResponse,
    stream: () => new OpenAIStreamTranslator(),
  },
  embeddings: { request: embeddingsRequest, response: embeddingsResponse },
  completions: {
    request: completionsRequest,
    response: completionsResponse,
    streamEvent: completionsStreamEvent,
  },
  media: openaiMediaAdapter,
  error: classifyOpenAIError,
});

export const openaiAdapter = adapter('openai');
export const openaiCompatibleAdapter = adapter('openai-compatible');
export const azureOpenAIAdapter = adapter('azure-openai');
