/**
 * The bound on a conversation continued from a stored answer (previous_response_id,
 * previous_interaction_id). The stored history is sent upstream whole on every turn, and it
 * is the uncompressed one, so neither compression nor an upstream context window stops it
 * growing: without a bound, a chain lets a client make the gateway parse, count and forward a
 * conversation of any size, past the body limit that bounds what it may send at once.
 * Continuing is allowed while the stored history fits in one request body: a client can carry
 * no more by chaining than it could have sent itself. Compaction is exempt (it is the way
 * out), which is safe: a stored history is at most one body plus one turn past the bound.
 * Responses and interactions are stored with their conversation's size at the head of the
 * record (stores/size-head.ts), so a refusal reads only that size, never the conversation,
 * and a turn that fits is not serialised again to be measured; `historyBytes` measures only
 * records stored before sizes were recorded.
 */
import { invalidParam, type GatewayError } from '../../errors.ts';
import type { ChatMessage } from '../../formats/openai/types.ts';

/** Bytes of the history as JSON, the form it is stored and forwarded in. */
export const historyBytes = (history: readonly ChatMessage[]): number =>
  Buffer.byteLength(JSON.stringify(history), 'utf8');

/** The refusal for a stored history of `bytes`, past `limitBytes`. */
export function chainTooLong(
  bytes: number,
  limitBytes: number,
  param: string,
  id: string,
  compact?: string,
): GatewayError {
  const way = compact ? `; summarise it with ${compact} and start a new conversation from that` : '';
  return invalidParam(
    param,
    `the conversation stored with ${id} is ${bytes} bytes, past the ${limitBytes}-byte ` +
      `request body limit a chained conversation may reach${way}`,
  );
}
