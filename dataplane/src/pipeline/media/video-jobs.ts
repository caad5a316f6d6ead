/**
 * Where video jobs are remembered between calls: which tenant and key own a job, and which
 * deployment holds it upstream (a job can only be read where it was created). A small
 * interface so a shared store (Redis) can replace the in-process one for several pods.
 */
export interface VideoJob {
  /** Gantry's id, shown to the caller; never the upstream's, which could repeat across deployments. */
  id: string;
  upstreamId: string;
  tenant: string;
  keyId: string;
  model: string;
  deployment: string;
  /** Length of the clip, which a remix keeps. */
  seconds: number;
  createdAt: number;
}

export interface VideoJobStore {
  put(job: VideoJob): Promise<void>;
  get(id: string): Promise<VideoJob | undefined>;
}

/** Jobs older than this are forgotten (OpenAI keeps generated videos for about a day). */
export const VIDEO_JOB_TTL_MS = 24 * 60 * 60 * 1000;

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

/** The job when the caller owns it; another tenant or key cannot tell it from a missing one. */
export function ownedJob(job: VideoJob | undefined, tenant: string, keyId: string): VideoJob | undefined {
  return job && job.tenant === tenant && job.keyId === keyId ? job : undefined;
}
