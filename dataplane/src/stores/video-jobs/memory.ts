/**
 * Video jobs in process, the embedded default for one pod: the generic owned store keyed by
 * the job's Gantry id, so a job is found under its own tenant and key only, kept a day, and
 * bounded fairly between tenants (past the bound the largest tenant's oldest job goes: one
 * tenant's flood of jobs never pushes out another tenant's).
 */
import { MemoryOwnedStore } from '../owned/memory.ts';
import type { Owner } from '../owned/types.ts';
import { systemClock, type Clock } from '../types.ts';
import { VIDEO_JOB_TTL_MS, type VideoJob, type VideoJobStore } from './types.ts';

/** A job's record is a few hundred characters: the count is the bound that bites. */
export const DEFAULT_MAX_VIDEO_JOBS = 100_000;
const DEFAULT_MAX_VIDEO_JOB_CHARS = 64 * 1024 * 1024;

export interface MemoryVideoJobStoreOptions {
  maxJobs?: number;
  /** One tenant's share at most (default: the whole bound, largest-first eviction still applies). */
  maxJobsPerTenant?: number;
  clock?: Clock;
}

export class MemoryVideoJobStore implements VideoJobStore {
  private readonly store: MemoryOwnedStore<VideoJob>;

  constructor(opts: MemoryVideoJobStoreOptions = {}) {
    this.store = new MemoryOwnedStore({
      maxEntries: opts.maxJobs ?? DEFAULT_MAX_VIDEO_JOBS,
      maxEntriesPerTenant: opts.maxJobsPerTenant,
      maxChars: DEFAULT_MAX_VIDEO_JOB_CHARS,
      // Jobs are stored as they are created, so a day from now is a day from `createdAt`.
      ttlMs: VIDEO_JOB_TTL_MS,
      clock: opts.clock ?? systemClock,
    });
  }

  put(job: VideoJob): Promise<void> {
    return this.store.put({ tenant: job.tenant, keyId: job.keyId }, job.id, job);
  }

  get(owner: Owner, id: string): Promise<VideoJob | undefined> {
    return this.store.get(owner, id);
  }
}
