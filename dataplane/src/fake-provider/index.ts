/**
 * The fake provider: stands in for OpenAI, Azure OpenAI, Anthropic and Gemini in tests and
 * in `npm start` without provider keys. See README.md for the deterministic contract.
 */
export { startFakeProvider } from './server.ts';
export type { FakeProviderOptions } from './server.ts';
export type { FakeProvider, Fault, FaultRule, RecordedRequest } from './types.ts';
export {
  IMAGE_TOKENS,
  countTokens,
  cutToCap,
  fakeAnswer,
  fakeToolArguments,
  normalizeText,
  promptTokens,
  splitWords,
} from './behaviour.ts';
export { DEFAULT_EMBEDDING_DIMS, fakeEmbedding } from './embedding.ts';
