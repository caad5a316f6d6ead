/**
 * State compression with context recovery (SPEC.md "State compression rules" and "Context
 * recovery (CCR)"): the one entry point the chat pipeline calls, and the store it needs.
 */
export { compressConversation, EXTRACTION_LABEL, type CompressionDeps } from './stage.ts';
export { createCcrStore, MemoryCcrStore, RedisCcrStore } from './ccr/index.ts';
export type { CcrStore } from './ccr/types.ts';
