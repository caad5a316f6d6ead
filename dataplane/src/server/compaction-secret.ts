/**
 * The server-side secret compaction items are sealed with (formats/responses/compaction.ts).
 * Every pod of a cluster must have the same one, or an item compacted on one pod is a 400 on
 * another; unset, items are sealed with the API key's hash (weaker: see docs/decisions.md).
 */
export const COMPACTION_SECRET_ENV = 'GANTRY_COMPACTION_SECRET';

/** Shorter is guessable offline from any one compaction item. */
export const MIN_COMPACTION_SECRET_CHARS = 32;

/**
 * The secret's bytes, undefined when unset. A blank or short one stops the gateway from
 * starting: a variable that is present but empty is a deployment that meant to set one (a
 * Helm chart renders it from a Secret whose key is empty), and falling back to the key-hash
 * seal would leave it silently on the weak one.
 */
export function compactionSecretFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): Buffer | undefined {
  const raw = env[COMPACTION_SECRET_ENV];
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value === '')
    throw new Error(
      `${COMPACTION_SECRET_ENV} is set but empty: give it 32+ characters (e.g. openssl rand -hex 32), or remove it to seal compaction items with the API key's hash`,
    );
  if (value.length < MIN_COMPACTION_SECRET_CHARS)
    throw new Error(
      `${COMPACTION_SECRET_ENV} must be at least ${MIN_COMPACTION_SECRET_CHARS} characters (e.g. openssl rand -hex 32)`,
    );
  return Buffer.from(value, 'utf8');
}
