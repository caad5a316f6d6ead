/** Shared vocabulary of the stores. */

/** Which key a limit or budget belongs to. Both parts are opaque strings (names from the config). */
export interface KeyRef {
  tenant: string;
  keyId: string;
}

/** Milliseconds since the epoch. Injected so tests can move time; every pod uses its own (NTP-synced) clock. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
