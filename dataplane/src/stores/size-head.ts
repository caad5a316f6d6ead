/**
 * The stored record of a chained conversation (a Responses response, an interaction) opens
 * with the conversation's size in bytes, `{"conversationBytes":N,…}`, written when the record
 * is serialised (the conversation once, for the record and its size both). A chain too long
 * to continue is then refused from that head alone, without loading or parsing a record of
 * megabytes, and one that fits is not serialised again to be measured
 * (server/routes/chained-history.ts).
 */

/** Enough characters for the head: `{"conversationBytes":`, up to 16 digits and a comma. */
export const SIZE_HEAD_CHARS = 40;

const HEAD = /^\{"conversationBytes":(\d{1,16}),/;

/** The size recorded at the head of a record; undefined for records stored without one. */
export function recordedBytes(head: string): number | undefined {
  const m = HEAD.exec(head);
  return m ? Number(m[1]) : undefined;
}

/** A record whose conversation is past the size asked for: only its recorded size was read. */
export interface OversizedRecord {
  oversized: true;
  conversationBytes: number;
}

/** `{"conversationBytes":N, …members, "conversation":[…]}`, the members in their order. */
export function withSizeHead(
  members: Readonly<Record<string, unknown>>,
  conversation: readonly unknown[],
): string {
  const serialised = JSON.stringify(conversation);
  let json = `{"conversationBytes":${Buffer.byteLength(serialised, 'utf8')}`;
  for (const [name, value] of Object.entries(members))
    if (value !== undefined) json += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
  return `${json},"conversation":${serialised}}`;
}

/**
 * KEYS[1]: the record. ARGV: head length, largest size wanted. The recorded size alone (a
 * number reply) when it is past that, else the whole record: one round trip either way.
 */
export const GET_WITHIN_LUA = `
local head = redis.call('GETRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if head == '' then return false end
local bytes = tonumber(string.match(head, '^{"conversationBytes":(%d+),'))
if bytes and bytes > tonumber(ARGV[2]) then return bytes end
return redis.call('GET', KEYS[1])`;

/** The script's size argument: Redis compares as a double, so no bound is a very large number. */
export const luaMaxBytes = (max: number): number => (Number.isFinite(max) ? max : Number.MAX_SAFE_INTEGER);
