import type { ProviderKind } from '@gantry/crds';
import { anthropicAdapter } from './anthropic/index.ts';
import { geminiAdapter } from './gemini/index.ts';
import { azureOpenAIAdapter, openaiAdapter, openaiCompatibleAdapter } from './openai/index.ts';
import type { ProviderAdapter } from './types.ts';

/** The one place a provider kind becomes an adapter. */
export const adapters: Readonly<Record<ProviderKind, ProviderAdapter>> = {
  openai: openaiAdapter,
  'openai-compatible': openaiCompatibleAdapter,
  'azure-openai': azureOpenAIAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
};

export type AdapterRegistry = typeof adapters;
