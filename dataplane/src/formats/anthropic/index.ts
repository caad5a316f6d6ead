/** Anthropic Messages client format: Gantry's `POST /v1/messages` endpoint. */
export * from './types.ts';
export { messagesToChat, effortForBudget, anthropicParam } from './to-chat.ts';
export { chatToMessages, stopReasonOf, anthropicUsageOf, messageId } from './from-chat.ts';
export { AnthropicStreamEncoder, type StreamEncoderOptions } from './stream-encoder.ts';
export { toAnthropicError, anthropicErrorType, anthropicErrorResponse } from './errors.ts';
export {
  withNative,
  nativeOf,
  nativeStructured,
  foreignRequest,
  NATIVE_KEY,
  type AnthropicNative,
} from './native.ts';
