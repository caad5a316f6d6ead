/**
 * RAG chunk bounds from the environment. Each variable overrides that bound of whichever
 * store serves (in process or shared); unset ones keep the store's default. A value that is
 * not a whole positive number stops the start with a message naming the variable (a typo
 * must not silently mean "unbounded").
 */
export interface RagChunkBounds {
  perIndex?: number;
  perTenant?: number;
  total?: number;
}

const VARIABLES: Readonly<Record<keyof RagChunkBounds, string>> = {
  perIndex: 'GANTRY_RAG_MAX_CHUNKS_PER_INDEX',
  perTenant: 'GANTRY_RAG_MAX_CHUNKS_PER_TENANT',
  total: 'GANTRY_RAG_MAX_CHUNKS_TOTAL',
};

export function ragBoundsFromEnv(env: Readonly<Record<string, string | undefined>>): RagChunkBounds {
  const out: RagChunkBounds = {};
  for (const [field, name] of Object.entries(VARIABLES) as [keyof RagChunkBounds, string][]) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new Error(`${name} must be a whole number above 0, got ${raw}`);
    out[field] = n;
  }
  return out;
}
