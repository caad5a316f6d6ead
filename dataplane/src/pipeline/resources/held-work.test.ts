import { afterEach, describe, expect, it } from 'vitest';
import { OWNED_MAX_AGE_MS } from '../../stores/ownership/types.ts';
import { StoreUnavailableError } from '../../stores/errors.ts';
import type { BudgetLimit } from '../../stores/budget.ts';
import { backends, fakeClock, type StoreFixture } from '../../stores/testing/backends.ts';
import { chargeThenClaim, HOLD_TTL_MS, pastHold, SETTLED_MEMORY_MS, type HeldWork } from './held-work.ts';

const budget: BudgetLimit = { limitUsd: 100, period: 'monthly' };
const DAY = 86_400_000;

describe.each(backends)('settling held work ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('remembers a charge as long as a claim lives: a read 40 days after a crash between charge and claim charges nothing more', async () => {
    const clock = fakeClock(Date.parse('2025-03-01T12:00:00Z'));
    fixture = await backend.create({ clock: clock.now });
    const stores = await fixture.open();
    const key = { tenant: 'acme', keyId: 'default/ft' };
    const work: HeldWork = {
      scope: 'fine_tuning_job',
      ...key,
      claim: { id: 'tuner/ftjob-1', createdAt: clock.now() },
      noun: 'fine-tuning job',
    };
    // The charge lands, the claim does not (the pod died in between).
    const claim = stores.ownership.claim.bind(stores.ownership);
    stores.ownership.claim = () => Promise.reject(new StoreUnavailableError('owned.claim'));
    await expect(chargeThenClaim(stores, budget, work, 3)).rejects.toThrow(/ownership store is unavailable/);
    stores.ownership.claim = claim;
    expect((await stores.budgets.state(key, budget)).spentUsd).toBe(3);
    // Past the old 30-day memory, the next read (or sweep) sees the job unclaimed and settles it.
    clock.advance(40 * DAY);
    expect(await chargeThenClaim(stores, budget, work, 3)).toBe(true);
    // That is next month's period: it must hold nothing of a second charge.
    expect((await stores.budgets.state(key, budget)).spentUsd).toBe(0);
  });
});

it('keeps settlement markers at least as long as claims and every hold', () => {
  expect(SETTLED_MEMORY_MS).toBeGreaterThanOrEqual(OWNED_MAX_AGE_MS);
  expect(SETTLED_MEMORY_MS).toBeGreaterThanOrEqual(Math.max(...Object.values(HOLD_TTL_MS)));
});

describe('pastHold', () => {
  it('is true only once the hold of work created then has lapsed, so a sweep stops asking after a 404', () => {
    expect(pastHold('batch', 1_000, 1_000 + HOLD_TTL_MS.batch)).toBe(false);
    expect(pastHold('batch', 1_000, 1_001 + HOLD_TTL_MS.batch)).toBe(true);
    expect(pastHold('fine_tuning_job', 1_000, 1_001 + HOLD_TTL_MS.batch)).toBe(false);
    expect(pastHold('fine_tuning_job', 1_000, 1_001 + HOLD_TTL_MS.fine_tuning_job)).toBe(true);
  });
});
