/**
 * What one Realtime session may do, whatever the client sends. Each is a CLI flag and an
 * environment variable (cli.ts); the defaults follow OpenAI's own limits where it has one.
 */
export interface RealtimeLimits {
  /** Largest client message; a bigger one closes the socket with 1009 (OpenAI takes 15 MiB audio appends). */
  maxMessageBytes: number;
  /** A session ends this long after it opened (OpenAI ends them at 60 minutes). */
  maxSessionMs: number;
  /** A session with no message either way for this long is closed. */
  idleTimeoutMs: number;
  /** Open sessions one API key may hold on one gateway pod; more is a 429 before the upgrade. */
  maxSessionsPerKey: number;
  /**
   * Characters of client text all of one key's sessions on this pod together may have the
   * guardrails scan per minute (scan-budget.ts); past it an event carrying text is refused (429)
   * unscanned. Each holder (a session opened with the key, or all sessions of one client secret)
   * gets at most an even part of it, `maxSessionsPerKey` ways, but no less than
   * `minScannedCharsPerSession` (scan-share.ts). The total has a CLI flag
   * (`--realtime-max-scanned-chars-per-minute`); the floor has none.
   */
  maxScannedCharsPerMinute: number;
  /** The floor of a holder's part of the key's scanning per minute (never more than the key's total). */
  minScannedCharsPerSession: number;
}

/**
 * The most `maxScannedCharsPerMinute` may be: 256 Mi characters, about 11 s of scanning CPU a
 * minute on benign text (45 ms a Mi), but up to ~4 min on hostile shapes (~1 s a Mi, the
 * bench's worst: four cores) for one key; past that the budget bounds nothing. The default
 * 16 Mi is up to ~16 s a minute.
 */
export const MAX_SCANNED_CHARS_PER_MINUTE_CEILING = 256 * 1024 * 1024;

export const DEFAULT_REALTIME_LIMITS: RealtimeLimits = {
  maxMessageBytes: 16 * 1024 * 1024,
  maxSessionMs: 60 * 60 * 1000,
  idleTimeoutMs: 5 * 60 * 1000,
  maxSessionsPerKey: 10,
  maxScannedCharsPerMinute: 16 * 1024 * 1024,
  // The even part is 1.6 Mi characters at the defaults; the floor counts with many sessions per key.
  minScannedCharsPerSession: 256 * 1024,
};
