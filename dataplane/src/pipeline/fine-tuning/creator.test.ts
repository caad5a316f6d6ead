import { afterEach, describe, expect, it } from 'vitest';
import { backends, type StoreFixture } from '../../stores/testing/backends.ts';
import { chargeThenClaim } from '../resources/held-work.ts';
import { formerSettlements, jobCreator, legacyId } from './creator.ts';
import { heldJob, settlementId } from './jobs.ts';

const BUDGET = { limitUsd: 10, period: 'monthly' as const };
const TUNERS = [{ name: 'tuner-a' }, { name: 'tuner-b' }];

/** A succeeded job naming no creator, as one key's account has it. */
const jobOf = (keyId: string) => ({
  id: 'ftjob-same',
  status: 'succeeded',
  created_at: 1_700_000_000,
  trained_tokens: 1000,
  metadata: { gantry_tenant: 't', gantry_key: keyId },
});

describe('legacy settlement ids', () => {
  it('differ by key, and a key id with a slash cannot meet another key id', () => {
    expect(legacyId('ns/a', 'ftjob-1')).not.toBe(legacyId('ns/b', 'ftjob-1'));
    expect(legacyId('ns/a/b', 'x')).not.toBe(legacyId('ns/a', 'b/x'));
  });

  it("do not count one key's settlement as another's", () => {
    expect(formerSettlements('ftjob-1', 'ns/b', ['tuner-a'], 'x')).not.toContain(legacyId('ns/a', 'ftjob-1'));
  });
});

describe.each(backends)('creator-less jobs of two keys with one upstream id ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(() => fixture?.close());

  it('charges each key once', async () => {
    fixture = await backend.create();
    const stores = await fixture.open();
    const keys = ['default/key-a', 'default/key-b'];
    for (const keyId of keys) {
      const owner = { tenant: 't', keyId };
      const job = jobOf(keyId);
      const c = await jobCreator(stores, owner, job, 'tuner-a', TUNERS);
      const work = { ...heldJob(owner, c.settlement, job), alsoSettledAs: c.alsoSettledAs };
      expect(await chargeThenClaim(stores, BUDGET, work, 0.25)).toBe(true);
    }
    const spent = await Promise.all(
      keys.map((keyId) => stores.budgets.state({ tenant: 't', keyId }, BUDGET)),
    );
    expect(spent.map((s) => s.spentUsd)).toEqual([0.25, 0.25]);
  });
});

describe.each(backends)('a creator-less job the sweep settled under its record ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('is not charged again by a read that can no longer find the record (creator gone from config)', async () => {
    fixture = await backend.create();
    const stores = await fixture.open();
    const owner = { tenant: 't', keyId: 'default/k' };
    const job = { ...jobOf(owner.keyId), id: 'ftjob-1' };
    const record = {
      family: 'fine_tuning_job' as const,
      id: settlementId('tuner-old', 'ftjob-1'),
      ...owner,
      deployment: 'tuner-old',
      model: 'm',
      createdAt: 1_700_000_000_000,
      estimateUsd: 1,
    };
    await stores.ownership.put(record);
    // The sweep settles it under the record's id, with the ids a reader might use beside it.
    const swept = {
      ...heldJob(record, record.id, job),
      alsoSettledAs: formerSettlements('ftjob-1', owner.keyId, ['tuner-old', 'tuner-b'], record.id),
      marksSettled: [legacyId(owner.keyId, 'ftjob-1')],
    };
    expect(await chargeThenClaim(stores, BUDGET, swept, 0.25)).toBe(true);
    // The record drops out of the key's list (a year on, or 10,000 newer records), tuner-old leaves the config.
    await stores.ownership.delete(record);
    const named = await jobCreator(stores, owner, job, 'tuner-b', [{ name: 'tuner-b' }]);
    expect(named.settlement).toBe(legacyId(owner.keyId, 'ftjob-1'));
    const read = { ...heldJob(owner, named.settlement, job), alsoSettledAs: named.alsoSettledAs };
    expect(await chargeThenClaim(stores, BUDGET, read, 0.25)).toBe(false);
    expect((await stores.budgets.state(owner, BUDGET)).spentUsd).toBeCloseTo(0.25, 9);
  });
});
