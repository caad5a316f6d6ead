/**
 * The opaque content of a compaction item. OpenAI encrypts its own; Gantry's is the summary
 * text the model wrote. It holds nothing the client did not already have, so it needs no
 * secrecy, but it does need integrity: it comes back as a system message (which the
 * prompt-injection guardrail does not read), and applications round-trip these items through
 * their users' hands as they may OpenAI's. So the summary is sealed with an HMAC: a rewritten
 * summary, a blob Gantry did not write, or one written for another key is a 400, as another
 * key's stored response is a 404.
 *
 * The MAC key (`compactionSealKey`): with a server secret (GANTRY_COMPACTION_SECRET), an HMAC
 * of the secret over tenant, key id and key hash, so only the gateway can seal. Without one,
 * the API key's hash itself, which is not secret from whoever reads the configuration (ApiKey
 * spec.keyHash) or Redis key names: they could seal a summary of their own. Either way the key
 * hash is part of it, so rotating an API key invalidates its compaction items.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidParam } from '../../errors.ts';

const PREFIX = 'gantry.compaction.v2.';
/** The first format: only a prefix, never sealed. */
const V1_PREFIX = 'gantry.compaction.v1.';

/** Whom a compaction item is sealed for. */
export interface CompactionOwner {
  tenant: string;
  /** The ApiKey's namespace/name. */
  keyId: string;
  /** Hex SHA-256 of the API key. */
  keyHash: string;
}

/** The MAC key for `owner`: derived from `secret` when the gateway has one, else the key hash. */
export function compactionSealKey(owner: CompactionOwner, secret: Buffer | undefined): string {
  if (secret === undefined) return owner.keyHash;
  // A JSON array of strings is an injective encoding of the three.
  return createHmac('sha256', secret)
    .update(JSON.stringify(['gantry.compaction.v2', owner.tenant, owner.keyId, owner.keyHash]))
    .digest('hex');
}

const seal = (sealKey: string, payload: string): Buffer =>
  createHmac('sha256', sealKey).update(PREFIX).update(payload).digest();

/** `sealKey`: from `compactionSealKey` (never the API key). */
export function encodeCompaction(summary: string, sealKey: string): string {
  const payload = Buffer.from(summary, 'utf8').toString('base64url');
  return `${PREFIX}${payload}.${seal(sealKey, payload).toString('base64url')}`;
}

/** The summary as a system message text for the next turn; anything but an intact blob of this key is a 400. */
export function compactionSummary(encrypted: string, param: string, sealKey: string): string {
  if (encrypted.startsWith(V1_PREFIX))
    throw invalidParam(
      param,
      'is a compaction in an older format this gateway no longer accepts: compact the conversation again',
    );
  const refuse = () => invalidParam(param, 'is not a compaction this gateway produced for this API key');
  if (!encrypted.startsWith(PREFIX)) throw refuse();
  const body = encrypted.slice(PREFIX.length);
  const dot = body.lastIndexOf('.');
  if (dot < 0) throw refuse();
  const payload = body.slice(0, dot);
  const given = Buffer.from(body.slice(dot + 1), 'base64url');
  const expected = seal(sealKey, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refuse();
  const summary = Buffer.from(payload, 'base64url').toString('utf8');
  return `Summary of the earlier conversation:\n${summary}`;
}

/** The instruction that turns a conversation into its summary. */
export const COMPACTION_PROMPT =
  'Summarise the conversation so far for your own later use: keep every fact, decision, ' +
  'open question, tool result and user preference that may matter; drop pleasantries. ' +
  'Answer with the summary only.';
