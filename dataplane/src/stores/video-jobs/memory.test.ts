import { describe, expect, it } from 'vitest';
import { MemoryVideoJobStore } from './memory.ts';
import { ownedJob, VIDEO_JOB_TTL_MS, type VideoJob } from './types.ts';

const ACME = { tenant: 'acme', keyId: 'default/k' };
const GLOBEX = { tenant: 'globex', keyId: 'default/g' };

const job = (id: string, createdAt: number, owner = ACME): VideoJob => ({
  id,
  upstreamId: `up-${id}`,
  ...owner,
  model: 'sora',
  deployment: 'sora',
  seconds: 4,
  createdAt,
});

describe('MemoryVideoJobStore', () => {
  it('keeps jobs for a day, then forgets them', async () => {
    let now = 1_000;
    const store = new MemoryVideoJobStore({ clock: () => now });
    await store.put(job('a', now));
    expect(await store.get(ACME, 'a')).toMatchObject({ upstreamId: 'up-a' });
    now += VIDEO_JOB_TTL_MS + 1;
    expect(await store.get(ACME, 'a')).toBeUndefined();
  });

  it('holds at most its bound of jobs, forgetting the oldest first', async () => {
    const store = new MemoryVideoJobStore({ clock: () => 0, maxJobs: 3 });
    for (const id of ['a', 'b', 'c', 'd']) await store.put(job(id, 0));
    expect(await store.get(ACME, 'a')).toBeUndefined();
    for (const id of ['b', 'c', 'd']) expect(await store.get(ACME, id)).toMatchObject({ id });
  });

  it("one tenant's flood past the bound evicts its own oldest jobs, never another tenant's", async () => {
    const store = new MemoryVideoJobStore({ clock: () => 0, maxJobs: 10 });
    for (const id of ['g1', 'g2', 'g3']) await store.put(job(id, 0, GLOBEX));
    for (let i = 0; i < 1_000; i++) await store.put(job(`flood-${i}`, 0));
    for (const id of ['g1', 'g2', 'g3']) expect(await store.get(GLOBEX, id)).toMatchObject({ id });
    // The flooder keeps what is left of the bound: its newest jobs.
    expect(await store.get(ACME, 'flood-999')).toMatchObject({ id: 'flood-999' });
    expect(await store.get(ACME, 'flood-993')).toMatchObject({ id: 'flood-993' });
    expect(await store.get(ACME, 'flood-992')).toBeUndefined();
    // The survivors are still the victim's alone.
    expect(await store.get(ACME, 'g1')).toBeUndefined();
    expect(await store.get({ ...GLOBEX, keyId: 'default/other' }, 'g1')).toBeUndefined();
  });

  it('hands out copies: editing a job read back changes nothing stored', async () => {
    const store = new MemoryVideoJobStore();
    await store.put(job('a', Date.now()));
    const read = await store.get(ACME, 'a');
    read!.deployment = 'elsewhere';
    expect((await store.get(ACME, 'a'))?.deployment).toBe('sora');
  });
});

describe('ownedJob', () => {
  it('shows a job only to its tenant and key', () => {
    const j = job('a', 0);
    expect(ownedJob(j, ACME)).toBe(j);
    expect(ownedJob(j, { tenant: 'acme', keyId: 'default/other' })).toBeUndefined();
    expect(ownedJob(j, { tenant: 'other', keyId: 'default/k' })).toBeUndefined();
    expect(ownedJob(undefined, ACME)).toBeUndefined();
  });
});
