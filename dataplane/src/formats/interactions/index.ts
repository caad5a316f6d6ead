export * from './types.ts';
export * from './to-chat.ts';
export * from './from-chat.ts';
export * from './stream-encoder.ts';
