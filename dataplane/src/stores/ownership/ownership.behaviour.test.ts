/** One behavioural suite for ownership records, run against the in-process and the Redis store. */
import { afterEach, describe, expect, it } from 'vitest';
import { backends, fakeClock, type StoreFixture } from '../testing/backends.ts';
import { OWNED_MAX_AGE_MS, ownedBy, SWEEP_LEASE_MS, type OwnedRecord } from './types.ts';

/** A claim target; the creation time only matters once claims are evicted. */
const claimable = (id: string) => ({ id, createdAt: 1_000 });

const record = (id: string, over: Partial<OwnedRecord> = {}): OwnedRecord => ({
  family: 'file',
  id,
  tenant: 'acme',
  keyId: 'default/a',
  deployment: 'files-dep',
  model: 'm',
  createdAt: 1_000,
  purpose: 'batch',
  ...over,
});

describe.each(backends)('owned store ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('finds a record only under its tenant and family, and ownedBy checks the key', async () => {
    fixture = await backend.create({});
    const { ownership: owned } = await fixture.open();
    await owned.put(record('file-1'));
    const hit = await owned.get('acme', 'file', 'file-1');
    expect(hit).toEqual(record('file-1'));
    expect(await owned.get('globex', 'file', 'file-1')).toBeUndefined();
    expect(await owned.get('acme', 'batch', 'file-1')).toBeUndefined();
    expect(ownedBy(hit, { tenant: 'acme', keyId: 'default/a' })).toEqual(hit);
    expect(ownedBy(hit, { tenant: 'acme', keyId: 'default/b' })).toBeUndefined();
    await owned.delete(record('file-1'));
    expect(await owned.get('acme', 'file', 'file-1')).toBeUndefined();
  });

  it("lists an owner's records newest first, never another key's", async () => {
    fixture = await backend.create({});
    const { ownership: owned } = await fixture.open();
    await owned.put(record('f-old', { createdAt: 1 }));
    await owned.put(record('f-new', { createdAt: 2 }));
    await owned.put(record('f-sibling', { keyId: 'default/b', createdAt: 3 }));
    await owned.put(record('f-other', { tenant: 'globex', createdAt: 4 }));
    const ids = (await owned.list({ tenant: 'acme', keyId: 'default/a' }, 'file')).map((r) => r.id);
    expect(ids).toEqual(['f-new', 'f-old']);
    expect((await owned.list({ tenant: 'acme', keyId: 'default/b' }, 'file')).map((r) => r.id)).toEqual([
      'f-sibling',
    ]);
    await owned.delete(record('f-new'));
    expect((await owned.list({ tenant: 'acme', keyId: 'default/a' }, 'file')).map((r) => r.id)).toEqual([
      'f-old',
    ]);
  });

  it('amends a record in place: still listed, null deletes it, a deleted one is not written back', async () => {
    fixture = await backend.create({});
    const { ownership: owned } = await fixture.open();
    await owned.put(record('file-amend'));
    const marked = await owned.amend('acme', 'file', 'file-amend', (r) => ({
      ...r,
      first404At: 7,
      count404: 1,
    }));
    expect(marked).toEqual({ ...record('file-amend'), first404At: 7, count404: 1 });
    expect(await owned.get('acme', 'file', 'file-amend')).toEqual(marked);
    expect(await owned.list({ tenant: 'acme', keyId: 'default/a' }, 'file')).toEqual([marked]);
    // The change cannot move the record to another id or tenant.
    await owned.amend('acme', 'file', 'file-amend', (r) => ({ ...r, id: 'elsewhere', tenant: 'globex' }));
    expect(await owned.get('acme', 'file', 'file-amend')).toMatchObject({ id: 'file-amend', tenant: 'acme' });
    expect(await owned.amend('acme', 'file', 'file-amend', () => null)).toBeNull();
    expect(await owned.get('acme', 'file', 'file-amend')).toBeUndefined();
    expect(await owned.list({ tenant: 'acme', keyId: 'default/a' }, 'file')).toEqual([]);
    let asked = 0;
    const none = await owned.amend('acme', 'file', 'file-amend', (r) => {
      asked++;
      return r;
    });
    expect(none).toBeUndefined();
    expect(asked).toBe(0);
    expect(await owned.get('acme', 'file', 'file-amend')).toBeUndefined();
  });

  it('applies amendments made at once (by two pods with Redis) one after another, none lost', async () => {
    fixture = await backend.create({});
    const first = await fixture.open();
    // In process, one store is the pod's own; with Redis, two pods share the record.
    const pods = [first, backend.name === 'redis' ? await fixture.open() : first];
    await pods[0]!.ownership.put(record('file-race'));
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        pods[i % 2]!.ownership.amend('acme', 'file', 'file-race', (r) => ({
          ...r,
          count404: (r.count404 ?? 0) + 1,
        })),
      ),
    );
    expect((await pods[1]!.ownership.get('acme', 'file', 'file-race'))?.count404).toBe(6);
  });

  it('claims once per mark', async () => {
    fixture = await backend.create({});
    const { ownership: owned } = await fixture.open();
    expect(await owned.claim('acme', 'batch', claimable('batch_1'), 'settled')).toBe(true);
    expect(await owned.claim('acme', 'batch', claimable('batch_1'), 'settled')).toBe(false);
    expect(await owned.claim('acme', 'batch', claimable('batch_2'), 'settled')).toBe(true);
    expect(await owned.claim('globex', 'batch', claimable('batch_1'), 'settled')).toBe(true);
  });

  it('tells which ids are claimed without claiming them', async () => {
    fixture = await backend.create({});
    const { ownership: owned } = await fixture.open();
    expect(await owned.claimed('acme', 'batch', [], 'settled')).toEqual([]);
    await owned.claim('acme', 'batch', claimable('batch_2'), 'settled');
    const ids = ['batch_1', 'batch_2', 'batch_3'].map(claimable);
    expect(await owned.claimed('acme', 'batch', ids, 'settled')).toEqual([false, true, false]);
    expect(await owned.claimed('acme', 'batch', ids, 'other')).toEqual([false, false, false]);
    expect(await owned.claimed('globex', 'batch', ids, 'settled')).toEqual([false, false, false]);
    // Asking claims nothing.
    expect(await owned.claim('acme', 'batch', claimable('batch_1'), 'settled')).toBe(true);
  });

  it('queues batches for the settlement sweep, across tenants, least recently looked at first', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { ownership: owned } = await fixture.open();
    const batch = (id: string, tenant: string, createdAt: number) =>
      record(id, { family: 'batch', tenant, createdAt, purpose: undefined });
    await owned.put(batch('batch_1', 'acme', 1));
    await owned.put(batch('batch_2', 'globex', 2));
    await owned.put(batch('batch_3', 'acme', 3));
    await owned.put(record('file-1'));
    const ids = async (limit = 10) => (await owned.unsettled(limit)).map((r) => `${r.tenant}/${r.id}`);
    expect(await ids(2)).toEqual(['acme/batch_1', 'globex/batch_2']);
    // Those two are leased: a second sweep meanwhile (another pod) takes the rest, then nothing.
    expect(await ids()).toEqual(['acme/batch_3']);
    expect(await ids()).toEqual([]);
    // Still running: to the back, free again. Finished: gone. Rewriting the record does not queue it twice.
    clock.advance(1);
    await owned.swept({ tenant: 'acme', id: 'batch_3', family: 'batch' }, false);
    clock.advance(1);
    await owned.swept({ tenant: 'acme', id: 'batch_1', family: 'batch' }, false);
    await owned.swept({ tenant: 'globex', id: 'batch_2', family: 'batch' }, true);
    await owned.put(batch('batch_3', 'acme', 3));
    expect(await ids()).toEqual(['acme/batch_3', 'acme/batch_1']);
    // A lease runs out on its own: a pod that died mid-sweep leaves its records to the next one.
    clock.advance(SWEEP_LEASE_MS + 1);
    expect((await ids()).sort()).toEqual(['acme/batch_1', 'acme/batch_3']);
    // A finished batch is not queued again by a late "still running".
    await owned.swept({ tenant: 'globex', id: 'batch_2', family: 'batch' }, false);
    // A deleted record leaves the queue.
    await owned.delete(batch('batch_3', 'acme', 3));
    clock.advance(SWEEP_LEASE_MS + 1);
    expect(await ids()).toEqual(['acme/batch_1']);
  });

  it('queues fine-tuning job records for their own sweep, apart from batches', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { ownership: owned } = await fixture.open();
    const job = (id: string, createdAt: number) =>
      record(id, { family: 'fine_tuning_job', createdAt, purpose: undefined });
    await owned.put(job('tuner/ftjob-1', 1));
    await owned.put(record('batch_1', { family: 'batch', createdAt: 2, purpose: undefined }));
    await owned.put(job('tuner/ftjob-2', 3));
    const ids = async (family: 'batch' | 'fine_tuning_job') =>
      (await owned.unsettled(10, family)).map((r) => r.id);
    expect(await ids('fine_tuning_job')).toEqual(['tuner/ftjob-1', 'tuner/ftjob-2']);
    expect(await ids('batch')).toEqual(['batch_1']);
    clock.advance(1);
    await owned.swept({ tenant: 'acme', id: 'tuner/ftjob-2', family: 'fine_tuning_job' }, false);
    clock.advance(1);
    await owned.swept({ tenant: 'acme', id: 'tuner/ftjob-1', family: 'fine_tuning_job' }, false);
    expect(await ids('fine_tuning_job')).toEqual(['tuner/ftjob-2', 'tuner/ftjob-1']);
    await owned.swept({ tenant: 'acme', id: 'tuner/ftjob-2', family: 'fine_tuning_job' }, true);
    clock.advance(SWEEP_LEASE_MS + 1);
    expect(await ids('fine_tuning_job')).toEqual(['tuner/ftjob-1']);
    expect(await ids('batch')).toEqual(['batch_1']);
  });

  if (backend.name === 'memory')
    it('forgets a record when its upstream object expires, and after the age ceiling', async () => {
      const clock = fakeClock(0);
      fixture = await backend.create({ clock: clock.now });
      const { ownership: owned } = await fixture.open();
      await owned.put(record('short', { expiresAt: 5_000 }));
      await owned.put(record('long'));
      clock.set(5_000);
      expect(await owned.get('acme', 'file', 'short')).toBeUndefined();
      expect(await owned.get('acme', 'file', 'long')).toBeDefined();
      // An amended record keeps its expiry.
      await owned.amend('acme', 'file', 'long', (r) => ({ ...r, count404: 1, first404At: 0 }));
      clock.set(OWNED_MAX_AGE_MS);
      expect(await owned.get('acme', 'file', 'long')).toBeUndefined();
      expect(await owned.list({ tenant: 'acme', keyId: 'default/a' }, 'file')).toEqual([]);
    });

  if (backend.name === 'redis')
    it('is shared between pods', async () => {
      fixture = await backend.create({});
      const [a, b] = [await fixture.open(), await fixture.open()];
      await a.ownership.put(record('file-shared'));
      expect((await b.ownership.get('acme', 'file', 'file-shared'))?.deployment).toBe('files-dep');
      expect(await a.ownership.claim('acme', 'batch', claimable('b'), 'settled')).toBe(true);
      expect(await b.ownership.claim('acme', 'batch', claimable('b'), 'settled')).toBe(false);
    });
});
