import { describe, expect, it } from 'vitest';
import type { UpstreamError, UpstreamErrorKind } from '../providers/types.ts';
import {
  boundedRetryAfter,
  cutByDeadline,
  mayHaveActed,
  backoffMs,
  decide,
  DEFAULT_RETRY,
  isDeploymentFault,
  isStreamFault,
  retryable,
  TRANSIENT_STATUSES,
  type Decision,
  type DeploymentRetry,
  type FailureContext,
  type RetryConfig,
} from './policy.ts';

const KINDS: readonly UpstreamErrorKind[] = [
  'rate_limited',
  'overloaded',
  'server',
  'auth',
  'not_found',
  'context_length',
  'content_policy',
  'bad_request',
  'too_large',
  'bad_reference',
  'network',
  'oversized',
  'timeout',
];

const cfg: RetryConfig = {
  maxAttempts: 4,
  maxRetryAfterMs: 5_000,
  backoffBaseMs: 100,
  backoffMaxMs: 1_000,
  maxSameRetries: 2,
  maxCooldownMs: 60_000,
};

const err = (kind: UpstreamErrorKind, retryAfterMs?: number): UpstreamError => ({
  kind,
  status: 0,
  message: kind,
  retryAfterMs,
});

const STOP: Decision = { kind: 'stop' };
const NEXT: Decision = { kind: 'next' };
const LARGER: Decision = { kind: 'larger-context' };
const retry = (delayMs: number): Decision => ({ kind: 'retry-same', delayMs });

describe('decide: the whole input space', () => {
  // random = 0.5 makes the jittered backoff known: retry 0 → 50 (floor base/2), retry 1 → 100.
  const random = 0.5;
  const backoffAt = [50, 100];
  const retryAfters = [
    { name: 'no Retry-After', ms: undefined },
    { name: 'Retry-After fits the budget', ms: 1_000 },
    { name: 'Retry-After longer than the time left', ms: 4_000 },
    { name: 'Retry-After above maxRetryAfterMs', ms: 6_000 },
  ];
  const budgets = [3_000, 60_000];

  /** The rules of the issue, written as a table: caller errors, budget, kind, alternatives. */
  function expected(
    kind: UpstreamErrorKind,
    hasAlternative: boolean,
    exhausted: boolean,
    retryAfterMs: number | undefined,
    sameRetries: number,
    remainingMs: number,
  ): Decision {
    const callersFault = kind === 'bad_request' || kind === 'content_policy' || kind === 'bad_reference';
    if (callersFault || exhausted) return STOP;
    // An event past the SSE bound no request asked for: the deployment's, failed over, never
    // retried on it (the same upstream would likely send it again).
    if (kind === 'oversized') return hasAlternative ? NEXT : STOP;
    if (kind === 'context_length') return LARGER;
    // Too large for this deployment's limit: another may have a higher one, this one never will.
    if (kind === 'too_large') return hasAlternative ? NEXT : STOP;
    if (hasAlternative) return NEXT;
    const brokenOrSilent = kind === 'timeout' || kind === 'auth' || kind === 'not_found';
    if (brokenOrSilent || sameRetries >= cfg.maxSameRetries) return STOP;
    if (kind === 'rate_limited' && retryAfterMs !== undefined) {
      if (retryAfterMs > cfg.maxRetryAfterMs || retryAfterMs >= remainingMs) return STOP;
      return retry(retryAfterMs);
    }
    const delay = backoffAt[sameRetries]!;
    return delay < remainingMs ? retry(delay) : STOP;
  }

  const cases: {
    kind: UpstreamErrorKind;
    hasAlternative: boolean;
    exhausted: boolean;
    ra: (typeof retryAfters)[number];
    sameRetries: number;
    remainingMs: number;
  }[] = [];
  for (const kind of KINDS)
    for (const hasAlternative of [false, true])
      for (const exhausted of [false, true])
        for (const ra of retryAfters)
          for (const sameRetries of [0, 1, 2])
            for (const remainingMs of budgets)
              cases.push({ kind, hasAlternative, exhausted, ra, sameRetries, remainingMs });

  it(`covers ${KINDS.length * 2 * 2 * 4 * 3 * 2} combinations`, () => {
    expect(cases).toHaveLength(1248);
  });

  it.each(cases)(
    '$kind alt=$hasAlternative exhausted=$exhausted $ra.name same=$sameRetries left=$remainingMs',
    ({ kind, hasAlternative, exhausted, ra, sameRetries, remainingMs }) => {
      const decision = decide(
        {
          error: err(kind, ra.ms),
          attemptsMade: exhausted ? cfg.maxAttempts : 1,
          sameRetries,
          remainingMs,
          hasAlternative,
          random,
        },
        cfg,
      );
      expect(decision).toEqual(expected(kind, hasAlternative, exhausted, ra.ms, sameRetries, remainingMs));
    },
  );
});

describe('decide: the rules by name', () => {
  const base = { attemptsMade: 1, sameRetries: 0, remainingMs: 30_000, hasAlternative: false, random: 0.5 };

  it.each(['bad_request', 'content_policy', 'bad_reference'] as const)(
    '%s stops even with alternatives and budget',
    (kind) => {
      expect(decide({ ...base, error: err(kind), hasAlternative: true }, cfg)).toEqual(STOP);
    },
  );

  it('too_large fails over to a deployment that may have a higher limit, and is never retried', () => {
    expect(decide({ ...base, error: err('too_large'), hasAlternative: true }, cfg)).toEqual(NEXT);
    expect(decide({ ...base, error: err('too_large') }, cfg)).toEqual(STOP);
    expect(
      decide({ ...base, error: err('too_large'), hasAlternative: true, attemptsMade: cfg.maxAttempts }, cfg),
    ).toEqual(STOP);
  });

  it('context_length asks for a larger model whether or not an alternative exists', () => {
    expect(decide({ ...base, error: err('context_length') }, cfg)).toEqual(LARGER);
    expect(decide({ ...base, error: err('context_length'), hasAlternative: true }, cfg)).toEqual(LARGER);
  });

  it('a silent deployment (timeout) is failed over, never retried', () => {
    expect(decide({ ...base, error: err('timeout'), hasAlternative: true }, cfg)).toEqual(NEXT);
    expect(decide({ ...base, error: err('timeout') }, cfg)).toEqual(STOP);
  });

  it('429 with an alternative fails over instead of waiting', () => {
    expect(decide({ ...base, error: err('rate_limited', 1_000), hasAlternative: true }, cfg)).toEqual(NEXT);
  });

  it('429 alone waits out its Retry-After when it fits', () => {
    expect(decide({ ...base, error: err('rate_limited', 1_000) }, cfg)).toEqual(retry(1_000));
  });

  it('Retry-After equal to maxRetryAfterMs is still waited; one ms more is not', () => {
    expect(decide({ ...base, error: err('rate_limited', 5_000) }, cfg)).toEqual(retry(5_000));
    expect(decide({ ...base, error: err('rate_limited', 5_001) }, cfg)).toEqual(STOP);
  });

  it('a delay equal to the time left is not taken (the retry would have no time)', () => {
    expect(decide({ ...base, error: err('rate_limited', 1_000), remainingMs: 1_000 }, cfg)).toEqual(STOP);
    expect(decide({ ...base, error: err('rate_limited', 1_000), remainingMs: 1_001 }, cfg)).toEqual(
      retry(1_000),
    );
  });

  it('a Retry-After on a 503 is not treated as a 429: jittered backoff applies', () => {
    expect(decide({ ...base, error: err('overloaded', 4_000) }, cfg)).toEqual(retry(50));
  });

  it('attempts are bounded even for retryable faults', () => {
    expect(decide({ ...base, error: err('server'), attemptsMade: cfg.maxAttempts - 1 }, cfg)).toEqual(
      retry(50),
    );
    expect(decide({ ...base, error: err('server'), attemptsMade: cfg.maxAttempts }, cfg)).toEqual(STOP);
    expect(decide({ ...base, error: err('server'), attemptsMade: cfg.maxAttempts + 3 }, cfg)).toEqual(STOP);
  });

  it('uses DEFAULT_RETRY when no config is given', () => {
    const d = decide({ ...base, error: err('rate_limited', DEFAULT_RETRY.maxRetryAfterMs + 1) });
    expect(d).toEqual(STOP);
    expect(decide({ ...base, error: err('server'), attemptsMade: DEFAULT_RETRY.maxAttempts })).toEqual(STOP);
  });

  it('a retried delay is never zero without Retry-After (never hammer a provider)', () => {
    const d = decide({ ...base, error: err('network'), random: 0 }, cfg);
    expect(d).toEqual(retry(cfg.backoffBaseMs / 2));
  });
});

describe('backoffMs', () => {
  const randoms = [0, 1e-9, 0.1, 0.25, 0.5, 0.75, 0.999999];

  it('stays within [base/2, min(max, base·2^retry)] and is a whole number of ms', () => {
    for (let retry = 0; retry <= 12; retry++) {
      const ceiling = Math.min(cfg.backoffMaxMs, cfg.backoffBaseMs * 2 ** retry);
      for (const r of randoms) {
        const ms = backoffMs(retry, r, cfg);
        expect(ms).toBeGreaterThanOrEqual(cfg.backoffBaseMs / 2);
        expect(ms).toBeLessThanOrEqual(ceiling);
        expect(Number.isInteger(ms)).toBe(true);
      }
    }
  });

  it('is never below base/2, even with random = 0', () => {
    for (let retry = 0; retry <= 12; retry++) expect(backoffMs(retry, 0, cfg)).toBe(50);
  });

  it('the ceiling doubles with each retry until backoffMaxMs', () => {
    const top = Array.from({ length: 7 }, (_, retry) => backoffMs(retry, 0.999999, cfg));
    expect(top).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('full jitter: the value scales with random inside the ceiling', () => {
    expect(backoffMs(3, 0.25, cfg)).toBe(200);
    expect(backoffMs(3, 0.5, cfg)).toBe(400);
    expect(backoffMs(3, 0.75, cfg)).toBe(600);
  });

  it('is non-decreasing in retry for a fixed random draw', () => {
    for (const r of randoms) {
      let prev = 0;
      for (let retry = 0; retry <= 12; retry++) {
        const ms = backoffMs(retry, r, cfg);
        expect(ms).toBeGreaterThanOrEqual(prev);
        prev = ms;
      }
    }
  });

  it('defaults to DEFAULT_RETRY', () => {
    expect(backoffMs(0, 0)).toBe(DEFAULT_RETRY.backoffBaseMs / 2);
    expect(backoffMs(50, 0.999999)).toBe(DEFAULT_RETRY.backoffMaxMs);
  });
});

describe('isDeploymentFault', () => {
  const table: Record<UpstreamErrorKind, boolean> = {
    server: true,
    overloaded: true,
    network: true,
    timeout: true,
    // No request asked for it (see below for one that may have).
    oversized: true,
    auth: true,
    not_found: true,
    rate_limited: false,
    context_length: false,
    content_policy: false,
    bad_request: false,
    too_large: false,
    bad_reference: false,
  };

  it('the table names every kind', () => {
    expect(Object.keys(table).sort()).toEqual([...KINDS].sort());
  });

  it.each(Object.entries(table))('%s → %s', (kind, fault) => {
    expect(isDeploymentFault(err(kind as UpstreamErrorKind))).toBe(fault);
  });

  it('not an event past the bound the request may have asked for (echo, image output, a huge body)', () => {
    expect(isDeploymentFault({ ...err('oversized'), requestCause: 'echo' })).toBe(false);
  });
});

describe('decide on an event past the SSE bound', () => {
  const ctx = (requestCause: string | undefined, hasAlternative: boolean): FailureContext => ({
    error: { kind: 'oversized', status: 0, message: 'line too long', requestCause },
    attemptsMade: 1,
    sameRetries: 0,
    remainingMs: 60_000,
    hasAlternative,
    random: 0.5,
  });
  it('fails over when no request asked for it, and stops when nothing else is left', () => {
    expect(decide(ctx(undefined, true))).toEqual(NEXT);
    expect(decide(ctx(undefined, false))).toEqual(STOP);
  });
  it('stops when the request may have asked for it: every deployment would send it', () => {
    expect(decide(ctx('echo', true))).toEqual(STOP);
    expect(decide(ctx('image output', false))).toEqual(STOP);
  });
});

describe('decide with a deployment retry policy (manifest spec.retry)', () => {
  const policy: DeploymentRetry = {
    attempts: 3,
    backoffMs: 40,
    maxBackoffMs: 500,
    retryOnStatus: new Set([429, 500, 502, 503]),
    retryOnConnectionError: true,
  };
  const base = { attemptsMade: 1, sameRetries: 0, remainingMs: 30_000, hasAlternative: true, random: 0.5 };
  const withStatus = (kind: UpstreamErrorKind, status: number, retryAfterMs?: number): UpstreamError => ({
    kind,
    status,
    message: kind,
    retryAfterMs,
  });

  // With an alternative: retried while attempts remain and the failure is listed, else next.
  const table: { name: string; error: UpstreamError; expected: Decision }[] = [
    { name: '500', error: withStatus('server', 500), expected: retry(20) },
    { name: '502', error: withStatus('server', 502), expected: retry(20) },
    { name: '503', error: withStatus('overloaded', 503), expected: retry(20) },
    { name: '504 (not listed)', error: withStatus('server', 504), expected: NEXT },
    { name: '529 (not listed)', error: withStatus('overloaded', 529), expected: NEXT },
    { name: 'connection reset', error: withStatus('network', 0), expected: retry(20) },
    { name: '429 without Retry-After', error: withStatus('rate_limited', 429), expected: retry(20) },
    { name: '429, short Retry-After', error: withStatus('rate_limited', 429, 500), expected: retry(500) },
    { name: '429, long Retry-After', error: withStatus('rate_limited', 429, 501), expected: NEXT },
    { name: 'timeout (never retried)', error: withStatus('timeout', 0), expected: NEXT },
    { name: 'auth', error: withStatus('auth', 401), expected: NEXT },
    { name: 'not found', error: withStatus('not_found', 404), expected: NEXT },
    {
      name: 'server fault without status counts as 500',
      error: withStatus('server', 0),
      expected: retry(20),
    },
    {
      name: 'overloaded without status counts as 503',
      error: withStatus('overloaded', 0),
      expected: retry(20),
    },
    { name: 'bad request', error: withStatus('bad_request', 400), expected: STOP },
    { name: 'content policy', error: withStatus('content_policy', 400), expected: STOP },
    { name: 'context length', error: withStatus('context_length', 400), expected: LARGER },
  ];

  it.each(table)('$name → $expected.kind', ({ error, expected }) => {
    expect(decide({ ...base, error, policy }, cfg)).toEqual(expected);
  });

  it('attempts count the first one: 3 attempts = 2 retries, then fail over', () => {
    const error = withStatus('server', 500);
    expect(decide({ ...base, error, policy, sameRetries: 1 }, cfg)).toEqual(retry(40));
    expect(decide({ ...base, error, policy, sameRetries: 2 }, cfg)).toEqual(NEXT);
    expect(decide({ ...base, error, policy: { ...policy, attempts: 1 } }, cfg)).toEqual(NEXT);
  });

  it('backoff grows per retry within maxBackoffMs', () => {
    const error = withStatus('server', 500);
    const big = { ...policy, attempts: 5 };
    const delays = [0, 1, 2, 3].map((sameRetries) =>
      decide({ ...base, error, policy: big, sameRetries, random: 0.999 }, cfg),
    );
    expect(delays).toEqual([retry(40), retry(80), retry(160), retry(320)]);
    expect(
      decide({ ...base, error, policy: { ...big, maxBackoffMs: 100 }, sameRetries: 3, random: 0.999 }, cfg),
    ).toEqual(retry(100));
  });

  it('the request deadline bounds the wait: a delay that does not fit fails over', () => {
    const error = withStatus('rate_limited', 429, 400);
    expect(decide({ ...base, error, policy, remainingMs: 401 }, cfg)).toEqual(retry(400));
    expect(decide({ ...base, error, policy, remainingMs: 400 }, cfg)).toEqual(NEXT);
  });

  it('the request-wide attempt cap still holds', () => {
    const error = withStatus('server', 500);
    expect(decide({ ...base, error, policy, attemptsMade: cfg.maxAttempts }, cfg)).toEqual(STOP);
  });

  it('an empty status list and no connection retry: always fail over', () => {
    const none = { ...policy, retryOnStatus: new Set<number>(), retryOnConnectionError: false };
    for (const error of [
      withStatus('server', 500),
      withStatus('network', 0),
      withStatus('rate_limited', 429),
    ])
      expect(decide({ ...base, error, policy: none }, cfg)).toEqual(NEXT);
  });

  describe('as the last resort (no alternative)', () => {
    const alone = { ...base, hasAlternative: false };

    it('retries at least as often as the gateway default, more when the policy asks', () => {
      const error = withStatus('server', 500);
      const one = { ...policy, attempts: 1 };
      expect(decide({ ...alone, error, policy: one, sameRetries: 1 }, cfg)).toEqual(retry(40));
      expect(decide({ ...alone, error, policy: one, sameRetries: 2 }, cfg)).toEqual(STOP);
      const four = { ...policy, attempts: 4 };
      expect(decide({ ...alone, error, policy: four, sameRetries: 2 }, cfg)).toEqual(retry(80));
      expect(decide({ ...alone, error, policy: four, sameRetries: 3 }, cfg)).toEqual(STOP);
    });

    it('follows the policy list: an unlisted status stops', () => {
      expect(decide({ ...alone, error: withStatus('server', 504), policy }, cfg)).toEqual(STOP);
    });

    it('waits out a Retry-After up to the gateway maximum, not only maxBackoffMs', () => {
      const error = withStatus('rate_limited', 429, 3_000);
      expect(decide({ ...alone, error, policy }, cfg)).toEqual(retry(3_000));
      expect(decide({ ...alone, error: withStatus('rate_limited', 429, 5_001), policy }, cfg)).toEqual(STOP);
    });
  });
});

describe('retryable', () => {
  const all: DeploymentRetry = {
    attempts: 2,
    backoffMs: 1,
    maxBackoffMs: 1,
    retryOnStatus: new Set(TRANSIENT_STATUSES),
    retryOnConnectionError: true,
  };
  const table: Record<UpstreamErrorKind, boolean> = {
    server: true,
    overloaded: true,
    network: true,
    rate_limited: true,
    timeout: false,
    // The same upstream would likely send the same event again (decide stops before asking).
    oversized: false,
    auth: false,
    not_found: false,
    context_length: false,
    content_policy: false,
    bad_request: false,
    too_large: false,
    bad_reference: false,
  };
  it.each(Object.entries(table))('%s → %s with every transient status listed', (kind, expected) => {
    expect(retryable(err(kind as UpstreamErrorKind), all)).toBe(expected);
  });
});

describe('boundedRetryAfter', () => {
  const rl = (retryAfterMs: number | undefined): UpstreamError => ({
    kind: 'rate_limited',
    status: 429,
    message: 'slow down',
    ...(retryAfterMs !== undefined && { retryAfterMs }),
  });
  it('keeps a sane value and an absent one as they are', () => {
    expect(boundedRetryAfter(rl(30_000), 60_000)).toEqual(rl(30_000));
    expect(boundedRetryAfter(rl(60_000), 60_000)).toEqual(rl(60_000));
    expect(boundedRetryAfter(rl(undefined), 60_000)).toEqual(rl(undefined));
  });
  it('cuts an absurd wait (1e12 s, year 9999, Infinity) to the bound', () => {
    expect(boundedRetryAfter(rl(1e15), 60_000).retryAfterMs).toBe(60_000);
    expect(boundedRetryAfter(rl(Date.parse('9999-12-31T00:00:00Z') - Date.now()), 60_000).retryAfterMs).toBe(
      60_000,
    );
    expect(boundedRetryAfter(rl(Number.POSITIVE_INFINITY), 60_000).retryAfterMs).toBe(60_000);
  });
  it('drops a value that is no wait at all', () => {
    expect(boundedRetryAfter(rl(-1000), 60_000)).toEqual(rl(undefined));
    expect(boundedRetryAfter(rl(Number.NaN), 60_000)).toEqual(rl(undefined));
  });
});

describe('mayHaveActed', () => {
  const e = (kind: UpstreamErrorKind, status: number, unsent?: true): UpstreamError => ({
    kind,
    status,
    message: kind,
    ...(unsent && { unsent }),
  });
  it('an upstream that failed while (or after) working may have acted', () => {
    expect(mayHaveActed(e('server', 500))).toBe(true);
    expect(mayHaveActed(e('server', 200))).toBe(true); // a 2xx it could not be understood
    expect(mayHaveActed(e('timeout', 0))).toBe(true);
    expect(mayHaveActed(e('network', 0))).toBe(true); // reset after sending
    expect(mayHaveActed(e('oversized', 200))).toBe(true); // it was answering
  });
  it('a refusal, or a request that never left, did not', () => {
    for (const kind of [
      'rate_limited',
      'overloaded',
      'auth',
      'not_found',
      'bad_request',
      'content_policy',
      'context_length',
    ] as const)
      expect(mayHaveActed(e(kind, 400))).toBe(false);
    expect(mayHaveActed(e('network', 0, true))).toBe(false);
    expect(mayHaveActed(e('timeout', 0, true))).toBe(false);
  });
});

describe('cutByDeadline', () => {
  const limits = { totalMs: 60_000, headersMs: 60_000, firstTokenMs: 30_000 };
  it('an attempt given less than the deployment’s patience, ended at the deadline: the deadline’s', () => {
    expect(cutByDeadline({ endedAt: 1_000, deadline: 1_000, budgetMs: 20_000, limits })).toBe(true);
    // Late timers (the shared tick fires up to 100 ms late) still count as the deadline's.
    expect(cutByDeadline({ endedAt: 1_100, deadline: 1_000, budgetMs: 20_000, limits })).toBe(true);
  });
  it('a deployment limit that fired before the deadline is the deployment’s', () => {
    expect(cutByDeadline({ endedAt: 500, deadline: 1_000, budgetMs: 50_000, limits })).toBe(false);
  });
  it('an attempt that had the deployment’s whole patience is the deployment’s, whatever the deadline', () => {
    expect(cutByDeadline({ endedAt: 1_000, deadline: 1_000, budgetMs: 60_000, limits })).toBe(false);
    expect(cutByDeadline({ endedAt: 1_000, deadline: 1_000, budgetMs: 90_000, limits })).toBe(false);
  });
  it('an attempt that had the request’s whole time but less than its deployment’s limit is the deadline’s', () => {
    // A 300 s reasoning deployment behind a 120 s request timeout: a slow answer is shaped by
    // the caller (max_tokens, prompt size), so only the deployment's own limit may count it.
    const reasoning = { totalMs: 300_000, headersMs: 300_000, firstTokenMs: undefined };
    expect(cutByDeadline({ endedAt: 1_000, deadline: 1_000, budgetMs: 120_000, limits: reasoning })).toBe(
      true,
    );
  });
});

describe('isStreamFault: what a stream’s end counts against its deployment', () => {
  const e = (kind: UpstreamErrorKind): UpstreamError => ({ kind, status: 0, message: kind });
  it('a cut, the provider’s own failure, or an event past the bound no request asked for', () => {
    for (const kind of ['server', 'overloaded', 'network', 'timeout', 'oversized'] as const)
      expect(isStreamFault(e(kind))).toBe(true);
  });
  it('not an error about the request, a rate limit, credentials that already worked, or an event past the bound the request asked for', () => {
    expect(isStreamFault({ ...e('oversized'), requestCause: 'echo of the prompt' })).toBe(false);
    for (const kind of [
      'bad_request',
      'content_policy',
      'context_length',
      'rate_limited',
      'auth',
      'not_found',
    ] as const)
      expect(isStreamFault(e(kind))).toBe(false);
  });
});
