export * from './types.ts';
export { responsesToChat, inputMessages, type TranslatedRequest } from './to-chat.ts';
export {
  completionToResponse,
  assistantTurnOf,
  responseObject,
  responsesUsage,
  type ResponseFrame,
} from './from-chat.ts';
export { ResponsesStreamEncoder } from './stream-encoder.ts';
export {
  compactionSealKey,
  encodeCompaction,
  COMPACTION_PROMPT,
  type CompactionOwner,
} from './compaction.ts';
export { listedItems, itemPage, type ListedItem } from './input-items.ts';
