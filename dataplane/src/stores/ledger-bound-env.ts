/**
 * The wallet ledger's bound from the environment (GANTRY_LEDGER_MAX_ENTRIES: entries kept per
 * tenant). Unset keeps DEFAULT_LEDGER_MAX_ENTRIES; a bad value stops the start (bounds-env.ts).
 */
import { positiveBoundsFromEnv } from './bounds-env.ts';

export const ledgerBoundFromEnv = (
  env: Readonly<Record<string, string | undefined>>,
): { ledgerMaxEntries?: number } =>
  positiveBoundsFromEnv({ ledgerMaxEntries: 'GANTRY_LEDGER_MAX_ENTRIES' }, env);
