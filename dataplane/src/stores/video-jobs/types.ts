/**
 * Where video jobs are remembered between calls: which tenant and key own a job, and which
 * deployment holds it upstream (a job can only be read where it was created). In process for
 * one pod (`memory.ts`), in Redis when pods share one (`redis.ts`), so a job created through
 * one pod can be read, downloaded and remixed through any other.
 */
import type { Owner } from '../owned/types.ts';

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
  /** The job when `owner` (same tenant, same key) created it; anyone else finds nothing, as for an unknown id. */
  get(owner: Owner, id: string): Promise<VideoJob | undefined>;
}

/** Jobs older than this are forgotten (OpenAI keeps generated videos for about a day). */
export const VIDEO_JOB_TTL_MS = 24 * 60 * 60 * 1000;

/** The job when `owner` created it; another tenant or key cannot tell it from a missing one. */
export function ownedJob(job: VideoJob | undefined, owner: Owner): VideoJob | undefined {
  return job && job.tenant === owner.tenant && job.keyId === owner.keyId ? job : undefined;
}
