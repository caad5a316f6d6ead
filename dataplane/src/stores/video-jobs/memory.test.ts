import { describe, expect, it } from 'vitest';
import { MemoryVideoJobStore } from './memory.ts';
import { ownedJob, VIDEO_JOB_TTL_MS, type VideoJob } from './types.ts';

const job = (id: string, createdAt: number): VideoJob => ({
  id,
  upstreamId: `up-${id}`,
  tenant: 'acme',
  keyId: 'default/k',
  model: 'sora',
  deployment: 'sora',
  seconds: 4,
  createdAt,
});

describe('MemoryVideoJobStore', () => {
  it('keeps jobs for a day, then forgets them', async () => {
    let now = 1_000;
    const store = new MemoryVideoJobStore(() => now);
    await store.put(job('a', now));
    expect(await store.get('a')).toMatchObject({ upstreamId: 'up-a' });
    now += VIDEO_JOB_TTL_MS + 1;
    expect(await store.get('a')).toBeUndefined();
  });

  it('holds at most its bound of jobs, forgetting the oldest first', async () => {
    const store = new MemoryVideoJobStore(() => 0, 3);
    for (const id of ['a', 'b', 'c', 'd']) await store.put(job(id, 0));
    expect(await store.get('a')).toBeUndefined();
    for (const id of ['b', 'c', 'd']) expect(await store.get(id)).toMatchObject({ id });
  });
});

describe('ownedJob', () => {
  it('shows a job only to its tenant and key', () => {
    const j = job('a', 0);
    expect(ownedJob(j, 'acme', 'default/k')).toBe(j);
    expect(ownedJob(j, 'acme', 'default/other')).toBeUndefined();
    expect(ownedJob(j, 'other', 'default/k')).toBeUndefined();
    expect(ownedJob(undefined, 'acme', 'default/k')).toBeUndefined();
  });
});
