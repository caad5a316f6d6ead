import { describe, expect, it } from 'vitest';
import { decideLease, type LeaseRecord } from './lease.ts';

const held = (holder: string | undefined, renewTime: number | undefined, duration = 15): LeaseRecord => ({
  holderIdentity: holder,
  renewTime,
  leaseDurationSeconds: duration,
  leaseTransitions: 3,
});

describe('decideLease', () => {
  it.each([
    ['no lease yet', undefined, 0, { kind: 'create' }],
    ['mine, fresh', held('me', 1_000), 2_000, { kind: 'renew' }],
    ['mine, even expired (renew keeps the transitions count)', held('me', 0), 99_000, { kind: 'renew' }],
    [
      'another holder, fresh',
      held('other', 10_000),
      20_000,
      { kind: 'wait', holder: 'other', expiresAt: 25_000 },
    ],
    [
      'another holder, expired exactly now',
      held('other', 10_000),
      25_000,
      { kind: 'acquire', transitions: 4 },
    ],
    ['another holder, long expired', held('other', 10_000), 90_000, { kind: 'acquire', transitions: 4 }],
    ['released (no holder)', held(undefined, 10_000), 11_000, { kind: 'acquire', transitions: 4 }],
    ['never renewed', held('other', undefined), 1, { kind: 'acquire', transitions: 4 }],
  ] as const)('%s', (_name, lease, now, expected) => {
    expect(decideLease(lease, 'me', now)).toEqual(expected);
  });
});
