import { describe, expect, it } from 'vitest';
import { ledgerBoundFromEnv } from './ledger-bound-env.ts';

describe('ledgerBoundFromEnv', () => {
  it('reads the bound and leaves it to the stores when unset', () => {
    expect(ledgerBoundFromEnv({})).toEqual({});
    expect(ledgerBoundFromEnv({ GANTRY_LEDGER_MAX_ENTRIES: ' ' })).toEqual({});
    expect(ledgerBoundFromEnv({ GANTRY_LEDGER_MAX_ENTRIES: '250000' })).toEqual({
      ledgerMaxEntries: 250_000,
    });
  });

  it.each(['0', '-1', '2.5', 'all'])('refuses %s, naming the variable', (value) => {
    expect(() => ledgerBoundFromEnv({ GANTRY_LEDGER_MAX_ENTRIES: value })).toThrow(
      /GANTRY_LEDGER_MAX_ENTRIES must be a whole number above 0/,
    );
  });
});
