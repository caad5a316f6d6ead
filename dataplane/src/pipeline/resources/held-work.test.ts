import { afterEach, describe, expect, it } from 'vitest';
import { OWNED_MAX_AGE_MS } from '../../stores/ownership/types.ts';
import { StoreUnavailableError } from '../../stores/errors.ts';
import type { BudgetLimit } from '../../stores/budget.ts';
import { backends, fakeClock, type StoreFixture } from '../../stores/testing/backends.ts';
import type { Stores } from '../../stores/index.ts';
import {
  chargeThenClaim,
  HOLD_TTL_MS,
  heldWorkId,
  pastHold,
  releaseAtNothing,
  reports,
  SETTLED_MEMORY_MS,
  type HeldWork,
} from './held-work.ts';

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

  describe('a $0 release racing a settlement at the real cost: the budget and the reported cost agree', () => {
    const key = { tenant: 'acme', keyId: 'default/batcher' };
    const work = (): HeldWork => ({
      scope: 'batch',
      ...key,
      claim: { id: 'batch_race', createdAt: 1 },
      noun: 'batch',
    });

    /** Stores whose `method` (of `store`) waits, once reached, until `go` is called. */
    function paused(stores: Stores, store: 'budgets' | 'ownership', method: 'charge' | 'claim') {
      let reach!: () => void;
      let go!: () => void;
      const reached = new Promise<void>((r) => (reach = r));
      const gate = new Promise<void>((r) => (go = r));
      const target = stores[store] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      const real = target[method]!.bind(target);
      const wrapped = Object.create(target) as Record<string, unknown>;
      wrapped[method] = async (...a: unknown[]) => {
        reach();
        await gate;
        return real(...a);
      };
      return { stores: { ...stores, [store]: wrapped } as Stores, reached, go };
    }

    async function held(stores: Stores): Promise<void> {
      const r = await stores.budgets.reserve({ ...key, budget, estimateUsd: 5 });
      if (!r.ok) throw new Error('reservation refused');
      await stores.budgets.retain(
        r.reservation,
        heldWorkId('batch', key.tenant, 'batch_race'),
        HOLD_TTL_MS.batch,
      );
    }

    it('the read charged first, the release claimed first: the read reports $2.50, the release released nothing', async () => {
      fixture = await backend.create();
      const stores = await fixture.open();
      await held(stores);
      const read = paused(stores, 'ownership', 'claim');
      const reading = chargeThenClaim(read.stores, budget, work(), 2.5);
      await read.reached;
      expect(await releaseAtNothing(stores, budget, work())).toBe(false);
      read.go();
      expect(await reading).toBe(true);
      const state = await stores.budgets.state(key, budget);
      expect(state.spentUsd).toBe(2.5);
      expect(state.heldUsd).toBe(0);
    });

    it('the release charged first, the read looked first: the release released it, the read reports nothing', async () => {
      fixture = await backend.create();
      const stores = await fixture.open();
      await held(stores);
      const read = paused(stores, 'budgets', 'charge');
      const reading = chargeThenClaim(read.stores, budget, work(), 2.5);
      await read.reached;
      expect(await releaseAtNothing(stores, budget, work())).toBe(true);
      read.go();
      expect(await reading).toBe(false);
      const state = await stores.budgets.state(key, budget);
      expect(state.spentUsd).toBe(0);
      expect(state.heldUsd).toBe(0);
    });

    it('the release started first, the read claimed first: the read reports $2.50 and the budget has it', async () => {
      fixture = await backend.create();
      const stores = await fixture.open();
      await held(stores);
      const release = paused(stores, 'ownership', 'claim');
      const releasing = releaseAtNothing(release.stores, budget, work());
      await release.reached;
      expect(await chargeThenClaim(stores, budget, work(), 2.5)).toBe(true);
      release.go();
      expect(await releasing).toBe(false);
      const state = await stores.budgets.state(key, budget);
      expect(state.spentUsd).toBe(2.5);
      expect(state.heldUsd).toBe(0);
    });

    it('two reads and a release: the cost is reported once', async () => {
      fixture = await backend.create();
      const stores = await fixture.open();
      await held(stores);
      const first = paused(stores, 'ownership', 'claim');
      const firstRead = chargeThenClaim(first.stores, budget, work(), 2.5);
      await first.reached;
      const second = await chargeThenClaim(stores, budget, work(), 2.5);
      expect(await releaseAtNothing(stores, budget, work())).toBe(false);
      first.go();
      expect([second, await firstRead].filter(Boolean)).toHaveLength(1);
      expect((await stores.budgets.state(key, budget)).spentUsd).toBe(2.5);
    });
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

describe('reports', () => {
  it('lets the claim decide between real settlements, and the kept charge decide against a release', () => {
    expect(reports(true, true, false)).toBe(true);
    // A pod that charged and died before its claim: the next taker reports.
    expect(reports(true, false, false)).toBe(true);
    expect(reports(false, true, false)).toBe(false);
    // A release took the claim but this charge was the one kept.
    expect(reports(false, true, true)).toBe(true);
    expect(reports(true, false, true)).toBe(false);
    expect(reports(false, false, true)).toBe(false);
    expect(reports(true, undefined, true)).toBe(true);
    expect(reports(false, undefined, false)).toBe(false);
  });
});
