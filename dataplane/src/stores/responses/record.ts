/**
 * A stored response as both stores keep it: JSON whose first field is the conversation's
 * size in bytes, so a store can read that size from the first few bytes of the entry. The
 * conversation is serialised once, for the entry and its size both.
 */
import type { StoredResponse } from './types.ts';

/** Enough characters for `{"conversationBytes":` and any safe integer. */
export const RECORD_HEAD_CHARS = 48;

const HEAD = /^\{"conversationBytes":(\d{1,16}),/;

export function encodeRecord(entry: StoredResponse): string {
  const conversation = JSON.stringify(entry.conversation);
  const bytes = Buffer.byteLength(conversation, 'utf8');
  let json = `{"conversationBytes":${bytes},"response":${JSON.stringify(entry.response)},"conversation":${conversation}`;
  if (entry.input !== undefined) json += `,"input":${JSON.stringify(entry.input)}`;
  return `${json}}`;
}

/** The size recorded at the head of an entry; undefined for entries stored without one. */
export function recordedBytes(head: string): number | undefined {
  const m = HEAD.exec(head);
  return m ? Number(m[1]) : undefined;
}
