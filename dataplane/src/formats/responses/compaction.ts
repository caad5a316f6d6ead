/**
 * The opaque content of a compaction item. OpenAI encrypts its own; Gantry's is the summary
 * text the model wrote, encoded so clients treat it as opaque and send it back unchanged.
 * It holds nothing the client did not already have, so it is encoded, not encrypted.
 */
import { invalidParam } from '../../errors.ts';

const PREFIX = 'gantry.compaction.v1.';

export const encodeCompaction = (summary: string): string =>
  PREFIX + Buffer.from(summary, 'utf8').toString('base64url');

/** The summary as a system message text for the next turn; a foreign blob is a 400. */
export function compactionSummary(encrypted: string, param: string): string {
  if (!encrypted.startsWith(PREFIX))
    throw invalidParam(param, 'is not a compaction produced by this gateway');
  const summary = Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8');
  return `Summary of the earlier conversation:\n${summary}`;
}

/** The instruction that turns a conversation into its summary. */
export const COMPACTION_PROMPT =
  'Summarise the conversation so far for your own later use: keep every fact, decision, ' +
  'open question, tool result and user preference that may matter; drop pleasantries. ' +
  'Answer with the summary only.';
