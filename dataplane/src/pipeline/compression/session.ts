/**
 * The CCR scope of a request: (team_id, key_hash, session_id), and its partition key, a
 * SHA-256 over the three components each length-prefixed (4-byte big-endian byte length,
 * then the UTF-8 bytes). Length prefixes make the encoding injective: no choice of session
 * name can produce another owner's bytes, so it cannot reach another owner's partition.
 */
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../../formats/openai/types.ts';
import { messageText } from './text.ts';

export interface Scope {
  teamId: string;
  keyHash: string;
  sessionId: string;
}

/** Longest `x-gantry-session` taken; a longer one is hashed to this space instead of refused. */
export const MAX_SESSION_CHARS = 256;

export function lengthPrefixed(parts: readonly string[]): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const bytes = Buffer.from(p, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32BE(bytes.length);
    chunks.push(len, bytes);
  }
  return Buffer.concat(chunks);
}

export function partitionKey(scope: Scope): string {
  return createHash('sha256')
    .update(lengthPrefixed([scope.teamId, scope.keyHash, scope.sessionId]))
    .digest('hex');
}

/**
 * The header verbatim; else a hash of the system/developer messages and the first user
 * turn (stable while the conversation grows, different between conversations); else none.
 * A derived session also holds the end user the request names (`endUserOf`): one key commonly
 * serves many people with one system prompt and the same opening line, and without it their
 * conversations would share one session, so one person's filed files and tool output could
 * be recovered into another's. (`u:` and `d:` sessions never meet; within `u:` the end user's
 * two fields are the first two length-prefixed parts and the first turn the last, so the
 * encoding stays injective.)
 */
export function sessionOf(
  header: string | string[] | undefined,
  messages: readonly ChatMessage[],
  endUser?: EndUser,
): string | undefined {
  const given = Array.isArray(header) ? header[0] : header;
  if (given !== undefined && given !== '')
    return given.length <= MAX_SESSION_CHARS ? given : `h:${sha256(given)}`;
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map(messageText);
  const firstUser = messages.find((m) => m.role === 'user');
  if (system.length === 0 && !firstUser) return undefined;
  const parts = [...system, firstUser ? messageText(firstUser) : ''];
  if (endUser !== undefined)
    return `u:${createHash('sha256')
      .update(lengthPrefixed([endUser.user, endUser.safetyIdentifier, ...parts]))
      .digest('hex')}`;
  return `d:${createHash('sha256').update(lengthPrefixed(parts)).digest('hex')}`;
}

/** Who a request says it serves: either field may be empty, not both. */
export interface EndUser {
  user: string;
  safetyIdentifier: string;
}

/**
 * The end user a request names, from `user` and `safety_identifier` (the name OpenAI now
 * prefers) together: an application may send a fixed `user` (itself) and the person in
 * `safety_identifier`, or the reverse, and taking only the first would put all its people in
 * one session. Non-strings are refused by the request schemas before this runs.
 */
export function endUserOf(req: { user?: unknown; safety_identifier?: unknown }): EndUser | undefined {
  const user = typeof req.user === 'string' ? req.user : '';
  const safetyIdentifier = typeof req.safety_identifier === 'string' ? req.safety_identifier : '';
  return user === '' && safetyIdentifier === '' ? undefined : { user, safetyIdentifier };
}

/** A scope needs an owner and a session; without either CCR is off for the request. */
export function scopeOf(teamId: string, keyHash: string, sessionId: string | undefined): Scope | undefined {
  if (sessionId === undefined || (teamId === '' && keyHash === '')) return undefined;
  return { teamId, keyHash, sessionId };
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
