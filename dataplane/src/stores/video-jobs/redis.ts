/**
 * Video jobs in Redis, shared by every pod: one JSON string per job under its Gantry id,
 * expiring a day after the job was created (by the pod's clock, like every store's time).
 * The id is random and the owner is checked on every read (`ownedJob`), so one key per job,
 * without the tenant's hash tag, is enough: no script touches two keys.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import type { Owner } from '../owned/types.ts';
import { systemClock, type Clock } from '../types.ts';
import { ownedJob, VIDEO_JOB_TTL_MS, type VideoJob, type VideoJobStore } from './types.ts';

export class RedisVideoJobStore implements VideoJobStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly now: Clock = systemClock,
  ) {}

  private key(id: string): string {
    return `${this.keys.prefix}:video:${encodeURIComponent(id)}`;
  }

  async put(job: VideoJob): Promise<void> {
    const ttlMs = job.createdAt + VIDEO_JOB_TTL_MS - this.now();
    if (ttlMs <= 0) return;
    await this.redis.set(this.key(job.id), JSON.stringify(job), 'PX', ttlMs).catch((err: unknown) => {
      throw toStoreError('videos.put', err);
    });
  }

  async get(owner: Owner, id: string): Promise<VideoJob | undefined> {
    const text = await this.redis.get(this.key(id)).catch((err: unknown) => {
      throw toStoreError('videos.get', err);
    });
    if (text === null) return undefined;
    const job = JSON.parse(text) as VideoJob;
    // Redis expires by its own clock; the pod's decides, as for the in-process store.
    return this.now() - job.createdAt > VIDEO_JOB_TTL_MS ? undefined : ownedJob(job, owner);
  }
}
