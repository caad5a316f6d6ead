/**
 * Reads a size-headed record (stores/size-head.ts) in one round trip: the record's JSON, or
 * only its recorded size when that is past what the caller can use.
 */
import type { Redis } from 'ioredis';
import { GET_WITHIN_LUA, luaMaxBytes, SIZE_HEAD_CHARS, type OversizedRecord } from '../size-head.ts';
import { bindScript } from './script.ts';

export type GetWithin = (
  key: string,
  maxConversationBytes: number,
) => Promise<string | OversizedRecord | undefined>;

export function bindGetWithin(redis: Redis, operation: string): GetWithin {
  const script = bindScript(
    redis,
    { name: 'gantrySizedGetWithin', numberOfKeys: 1, lua: GET_WITHIN_LUA },
    operation,
  );
  return async (key, maxConversationBytes) => {
    const reply = (await script([key], [SIZE_HEAD_CHARS, luaMaxBytes(maxConversationBytes)])) as
      string | number | null;
    if (reply === null) return undefined;
    if (typeof reply === 'number') return { oversized: true, conversationBytes: reply };
    return reply;
  };
}
