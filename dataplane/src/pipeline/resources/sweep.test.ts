import { afterEach, describe, expect, it } from 'vitest';
import { backends, fakeClock, type StoreFixture } from '../../stores/testing/backends.ts';
import { SWEEP_LEASE_MS, type OwnedRecord } from '../../stores/ownership/types.ts';
import { PER_LEASE, READ_TIMEOUT_MS, sweeper, type Outcome } from './sweep.ts';

const log = { warn: () => undefined, info: () => undefined };

describe.each(backends)("a sweep tick's records ($name)", (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  async function queued(count: number) {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const stores = await fixture.open();
    for (let i = 0; i < count; i++) {
      const record: OwnedRecord = {
        family: 'fine_tuning_job',
        id: `tuner/ftjob-${i}`,
        tenant: 'acme',
        keyId: 'default/sweep',
        deployment: 'tuner',
        model: 'm',
        createdAt: clock.now(),
        estimateUsd: 1,
      };
      await stores.ownership.put(record);
    }
    return { clock, stores };
  }

  it('takes records in batches it can read within their lease, reading each taken record once', async () => {
    const { clock, stores } = await queued(30);
    const takes: { at: number; limit: number; got: number }[] = [];
    const unsettled = stores.ownership.unsettled.bind(stores.ownership);
    stores.ownership.unsettled = async (limit, family) => {
      const got = await unsettled(limit, family);
      takes.push({ at: clock.now(), limit, got: got.length });
      return got;
    };
    const read: string[] = [];
    let lateReads = 0;
    // Every read takes its whole timeout.
    const slow = (record: OwnedRecord): Promise<Outcome> => {
      read.push(record.id);
      clock.advance(READ_TIMEOUT_MS);
      if (clock.now() > takes.at(-1)!.at + SWEEP_LEASE_MS - READ_TIMEOUT_MS) lateReads++;
      return Promise.resolve({ kind: 'running' });
    };
    const report = await sweeper({ stores, log }, 'fine_tuning_job', 200, slow).tick();
    expect(PER_LEASE).toBe(9);
    expect(takes.map((t) => t.limit).every((n) => n <= PER_LEASE)).toBe(true);
    // Each read ended with one read's time of its batch's lease to spare; each record read once.
    expect({ lateReads, read: read.length, distinct: new Set(read).size, checked: report.checked }).toEqual({
      lateReads: 0,
      read: 30,
      distinct: 30,
      checked: 30,
    });
  });

  it("stops at the tick's limit", async () => {
    const { clock, stores } = await queued(30);
    let read = 0;
    const quick = (): Promise<Outcome> => {
      read++;
      clock.advance(1);
      return Promise.resolve({ kind: 'running' });
    };
    await sweeper({ stores, log }, 'fine_tuning_job', 20, quick).tick();
    expect(read).toBe(20);
  });
});
