/** One behavioural suite for the video job store, run against the in-process and the Redis store. */
import { afterEach, describe, expect, it } from 'vitest';
import { backends, fakeClock, type StoreFixture } from '../testing/backends.ts';
import { VIDEO_JOB_TTL_MS, type VideoJob } from './types.ts';

const ACME = { tenant: 'acme', keyId: 'default/k' };

const job = (id: string, createdAt: number, tenant = 'acme'): VideoJob => ({
  id,
  upstreamId: `up-${id}`,
  tenant,
  keyId: 'default/k',
  model: 'sora',
  deployment: 'sora-eu',
  seconds: 8,
  createdAt,
});

describe.each(backends)('video job store ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('round-trips a job, found by its owner only', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { videoJobs } = await fixture.open();
    await videoJobs.put(job('video_1', clock.now()));
    expect(await videoJobs.get(ACME, 'video_1')).toEqual(job('video_1', clock.now()));
    // Another tenant, or another key of the same tenant, finds nothing, as for an unknown id.
    expect(await videoJobs.get({ tenant: 'globex', keyId: 'default/k' }, 'video_1')).toBeUndefined();
    expect(await videoJobs.get({ tenant: 'acme', keyId: 'default/other' }, 'video_1')).toBeUndefined();
    expect(await videoJobs.get(ACME, 'video_2')).toBeUndefined();
  });

  it('forgets a job a day after it was created', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { videoJobs } = await fixture.open();
    await videoJobs.put(job('video_old', clock.now()));
    clock.advance(VIDEO_JOB_TTL_MS - 1);
    expect(await videoJobs.get(ACME, 'video_old')).toMatchObject({ id: 'video_old' });
    clock.advance(2);
    expect(await videoJobs.get(ACME, 'video_old')).toBeUndefined();
  });

  it('keeps ids that look like key separators apart', async () => {
    fixture = await backend.create({});
    const { videoJobs } = await fixture.open();
    await videoJobs.put(job('a:b', Date.now()));
    expect(await videoJobs.get(ACME, 'a')).toBeUndefined();
    expect(await videoJobs.get(ACME, 'a%3Ab')).toBeUndefined();
    expect(await videoJobs.get(ACME, 'a:b')).toMatchObject({ upstreamId: 'up-a:b' });
  });

  if (backend.name === 'redis')
    it('is shared between pods', async () => {
      fixture = await backend.create({});
      const [a, b] = [await fixture.open(), await fixture.open()];
      await a.videoJobs.put(job('video_shared', Date.now()));
      expect((await b.videoJobs.get(ACME, 'video_shared'))?.deployment).toBe('sora-eu');
    });
});
