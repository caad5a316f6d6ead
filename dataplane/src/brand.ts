/** The brand fragment SPEC.md writes as `svc`. Every Gantry header name derives from it. */
export const BRAND = 'gantry';

export const RequestHeaders = {
  cache: `x-${BRAND}-cache`,
  cacheMeta: `x-${BRAND}-cache-meta`,
  state: `x-${BRAND}-state`,
  route: `x-${BRAND}-route`,
  guard: `x-${BRAND}-guard`,
  session: `x-${BRAND}-session`,
  /** The model of object routes whose body names none (routes/resources.ts). */
  model: `x-${BRAND}-model`,
} as const;

export const ResponseHeaders = {
  provider: `x-${BRAND}-provider`,
  attempts: `x-${BRAND}-attempts`,
  failed: `x-${BRAND}-failed`,
  cost: `x-${BRAND}-cost`,
  requestId: `x-${BRAND}-request-id`,
  cacheStatus: `x-${BRAND}cache-status`,
  cacheScore: `x-${BRAND}cache-score`,
  cacheTokensSaved: `x-${BRAND}cache-tokens-saved`,
  cacheMatchedMeta: `x-${BRAND}cache-matched-meta`,
  routeLevel: `x-${BRAND}route-level`,
  routeModel: `x-${BRAND}route-model`,
  routeEffort: `x-${BRAND}route-effort`,
  statePrefix: `x-${BRAND}state-`,
} as const;
