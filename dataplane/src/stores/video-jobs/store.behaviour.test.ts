/** One behavioural suite for the video job store, run against the in-process and the Redis store. */
import { afterEach, describe, expect, it } from 'vitest';
import { backends, fakeClock, type StoreFixture } from '../testing/backends.ts';
import { ownedJob, VIDEO_JOB_TTL_MS, type VideoJob } from './types.ts';

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

  it('round-trips a job, shown to its owner only', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { videoJobs } = await fixture.open();
    await videoJobs.put(job('video_1', clock.now()));
    const found = await videoJobs.get('video_1');
    expect(found).toEqual(job('video_1', clock.now()));
    expect(ownedJob(found, 'acme', 'default/k')).toEqual(found);
    expect(ownedJob(found, 'globex', 'default/k')).toBeUndefined();
    expect(await videoJobs.get('video_2')).toBeUndefined();
  });

  it('forgets a job a day after it was created', async () => {
    const clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    const { videoJobs } = await fixture.open();
    await videoJobs.put(job('video_old', clock.now()));
    clock.advance(VIDEO_JOB_TTL_MS - 1);
    expect(await videoJobs.get('video_old')).toMatchObject({ id: 'video_old' });
    clock.advance(2);
    expect(await videoJobs.get('video_old')).toBeUndefined();
  });

  it('keeps ids that look like key separators apart', async () => {
    fixture = await backend.create({});
    const { videoJobs } = await fixture.open();
    await videoJobs.put(job('a:b', Date.now()));
    expect(await videoJobs.get('a')).toBeUndefined();
    expect(await videoJobs.get('a%3Ab')).toBeUndefined();
    expect(await videoJobs.get('a:b')).toMatchObject({ upstreamId: 'up-a:b' });
  });

  if (backend.name === 'redis')
    it('is shared between pods', async () => {
      fixture = await backend.create({});
      const [a, b] = [await fixture.open(), await fixture.open()];
      await a.videoJobs.put(job('video_shared', Date.now()));
      expect((await b.videoJobs.get('video_shared'))?.deployment).toBe('sora-eu');
    });
});
