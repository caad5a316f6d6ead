/**
 * Where video jobs are remembered between calls: which tenant and key own a job, and which
 * deployment holds it upstream (a job can only be read where it was created). In process for
 * one pod (`memory.ts`), in Redis when pods share one (`redis.ts`), so a job created through
 * one pod can be read, downloaded and remixed through any other.
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

/** The job when the caller owns it; another tenant or key cannot tell it from a missing one. */
export function ownedJob(job: VideoJob | undefined, tenant: string, keyId: string): VideoJob | undefined {
  return job && job.tenant === tenant && job.keyId === keyId ? job : undefined;
}
