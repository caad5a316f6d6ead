/** SPEC.md's CCR limits, exactly. */
export const CCR_FILES_PER_SCOPE = 32;
export const CCR_LIVE_SCOPES = 512;
export const CCR_ENTRY_LIFETIME_MS = 30 * 60_000;
export const CCR_DECAY_TURNS = 5;
