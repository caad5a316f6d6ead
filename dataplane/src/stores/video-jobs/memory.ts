/** Video jobs in process: the embedded default for one pod. */
import { VIDEO_JOB_TTL_MS, type VideoJob, type VideoJobStore } from './types.ts';

export class MemoryVideoJobStore implements VideoJobStore {
  private readonly jobs = new Map<string, VideoJob>();

  constructor(
    private readonly now: () => number = Date.now,
    /** A bound on memory whatever the traffic: past it the oldest job is forgotten. */
    private readonly maxJobs = 100_000,
  ) {}

  async put(job: VideoJob): Promise<void> {
    this.sweep();
    this.jobs.set(job.id, job);
    for (const id of this.jobs.keys()) {
      if (this.jobs.size <= this.maxJobs) break;
      this.jobs.delete(id);
    }
  }

  async get(id: string): Promise<VideoJob | undefined> {
    const job = this.jobs.get(id);
    if (job && this.now() - job.createdAt > VIDEO_JOB_TTL_MS) {
      this.jobs.delete(id);
      return undefined;
    }
    return job;
  }

  /** Maps iterate in insertion order, so the expired jobs are at the front. */
  private sweep(): void {
    const cutoff = this.now() - VIDEO_JOB_TTL_MS;
    for (const [id, job] of this.jobs) {
      if (job.createdAt > cutoff) break;
      this.jobs.delete(id);
    }
  }
}
