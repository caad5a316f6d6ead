/**
 * RAG chunk bounds from the environment. Each variable overrides that bound of whichever
 * store serves (in process or shared); unset ones keep the store's default; bad values
 * stop the start (bounds-env.ts).
 */
import { positiveBoundsFromEnv } from '../bounds-env.ts';

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

export const ragBoundsFromEnv = (env: Readonly<Record<string, string | undefined>>): RagChunkBounds =>
  positiveBoundsFromEnv(VARIABLES, env);
