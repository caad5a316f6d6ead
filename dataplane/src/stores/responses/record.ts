/**
 * A stored response as both stores keep it: JSON whose first fields are the conversation's
 * size in bytes and the response's length, then the response, so a store can read that size,
 * or the response alone, from the first bytes of the entry without loading the conversation.
 * The response is written ASCII-only (non-ASCII as \u escapes, the same JSON value), so its
 * length is the same in characters (the in-process store) and in bytes (Redis' GETRANGE).
 * The conversation is serialised once, for the entry and its size both. The response's length
 * is read from the head only (`responseSpan`, the Redis script); an entry parsed whole carries
 * it too, and nothing reads it there, so `StoredResponse` does not declare it.
 */
import type { ResponseObject } from '../../formats/responses/types.ts';
import type { StoredResponse } from './types.ts';

export { recordedBytes } from '../size-head.ts';

/** Enough characters for the head (`{"conversationBytes":…,"responseChars":…,"response":`). */
export const RECORD_HEAD_CHARS = 96;

const RESPONSE_AT = /^\{"conversationBytes":\d{1,16},"responseChars":(\d{1,16}),"response":/;

const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

export function encodeRecord(entry: StoredResponse): string {
  const conversation = JSON.stringify(entry.conversation);
  const bytes = Buffer.byteLength(conversation, 'utf8');
  const response = asciiJson(entry.response);
  let json = `{"conversationBytes":${bytes},"responseChars":${response.length},"response":${response},"conversation":${conversation}`;
  if (entry.input !== undefined) json += `,"input":${JSON.stringify(entry.input)}`;
  return `${json}}`;
}

/** Where the response lies in the entry (`end` exclusive); undefined for older layouts. */
export function responseSpan(head: string): { start: number; end: number } | undefined {
  const m = RESPONSE_AT.exec(head);
  return m ? { start: m[0].length, end: m[0].length + Number(m[1]) } : undefined;
}

export const parseResponse = (json: string): ResponseObject => JSON.parse(json) as ResponseObject;
