/**
 * The server-side secret compaction items are sealed with (formats/responses/compaction.ts).
 * Every pod of a cluster must have the same one, or an item compacted on one pod is a 400 on
 * another; unset, items are sealed with the API key's hash (weaker: see docs/decisions.md).
 */
export const COMPACTION_SECRET_ENV = 'GANTRY_COMPACTION_SECRET';

/** Shorter is guessable offline from any one compaction item. */
export const MIN_COMPACTION_SECRET_CHARS = 32;

/** The secret's bytes, undefined when unset; a short one stops the gateway from starting. */
export function compactionSecretFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): Buffer | undefined {
  const value = env[COMPACTION_SECRET_ENV]?.trim();
  if (value === undefined || value === '') return undefined;
  if (value.length < MIN_COMPACTION_SECRET_CHARS)
    throw new Error(
      `${COMPACTION_SECRET_ENV} must be at least ${MIN_COMPACTION_SECRET_CHARS} characters (e.g. openssl rand -hex 32)`,
    );
  return Buffer.from(value, 'utf8');
}
