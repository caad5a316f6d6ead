/**
 * Fine-tuning jobs as the caller sees them. The upstream keeps the job; Gantry keeps no
 * copy. Ownership travels with it: the job carries its tenant and key in `metadata`
 * (OpenAI stores and filters on it), and the id the caller gets names the deployment that
 * holds it, so any pod can find, check and answer it. Pure.
 */
import { MAX_ESTIMATE_USD } from '../../accounting/estimate.ts';
import { MAX_REPORTED_TOKENS } from '../../accounting/reported-usage.ts';
import { chargedMicros, heldMicros, microsToUsd } from '../../accounting/micros.ts';
import { invalidParam } from '../../errors.ts';
import type { HeldWork } from '../resources/held-work.ts';
import { isPlainId } from '../resources/references.ts';

export const OWNER_KEYS = {
  tenant: 'gantry_tenant',
  key: 'gantry_key',
  model: 'gantry_model',
  /**
   * The deployment that created the job. Deployments sharing one provider account all list and
   * retrieve it; its settlement is named by this one, so it is charged once whichever reads it.
   */
  deployment: 'gantry_deployment',
} as const;

export interface Owner {
  tenant: string;
  keyId: string;
}

export interface JobRef {
  deployment: string;
  upstreamId: string;
}

const PREFIX = 'ftjob-gty';

export function jobId(ref: JobRef): string {
  return PREFIX + Buffer.from(JSON.stringify([ref.deployment, ref.upstreamId])).toString('base64url');
}

export function parseJobId(id: string): JobRef | undefined {
  if (!id.startsWith(PREFIX)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string')
      // The upstream id is the caller's to forge and goes into the upstream path.
      return isPlainId(v[1]) ? { deployment: v[0], upstreamId: v[1] } : undefined;
  } catch {
    // not one of ours
  }
  return undefined;
}

const metadataOf = (job: Record<string, unknown>): Record<string, unknown> =>
  typeof job.metadata === 'object' && job.metadata !== null ? (job.metadata as Record<string, unknown>) : {};

/**
 * The caller's metadata plus the owner's; the owner keys are Gantry's alone. The creating
 * deployment is added per attempt (`createdOn`), once the router has chosen it.
 */
export function ownedMetadata(
  metadata: Record<string, unknown> | undefined,
  owner: Owner,
  model: string,
): Record<string, unknown> {
  for (const k of Object.values(OWNER_KEYS))
    if (metadata && k in metadata) throw invalidParam(`metadata.${k}`, 'is reserved by the gateway');
  return {
    ...metadata,
    [OWNER_KEYS.tenant]: owner.tenant,
    [OWNER_KEYS.key]: owner.keyId,
    [OWNER_KEYS.model]: model,
  };
}

/** A create's body as sent to `deployment`: its metadata names the deployment creating the job. */
export function createdOn(body: Record<string, unknown>, deployment: string): Record<string, unknown> {
  return { ...body, metadata: { ...metadataOf(body), [OWNER_KEYS.deployment]: deployment } };
}

export function ownedBy(job: Record<string, unknown>, owner: Owner): boolean {
  const m = metadataOf(job);
  return m[OWNER_KEYS.tenant] === owner.tenant && m[OWNER_KEYS.key] === owner.keyId;
}

/** The upstream job with Gantry's id and model name, and without the owner keys. */
export function clientView(job: Record<string, unknown>, deployment: string): Record<string, unknown> {
  const m = { ...metadataOf(job) };
  const model = typeof m[OWNER_KEYS.model] === 'string' ? m[OWNER_KEYS.model] : job.model;
  for (const k of Object.values(OWNER_KEYS)) delete m[k];
  return {
    ...job,
    id: jobId({ deployment, upstreamId: String(job.id) }),
    model,
    metadata: Object.keys(m).length > 0 ? m : null,
  };
}

/** OpenAI's ceiling on `n_epochs`; `auto` (or none given) may go that far, so it is held at that. */
export const MAX_EPOCHS = 50;

/**
 * Most trained tokens a job is charged for: the per-call sanity cap times the most epochs.
 * Keeps a corrupt report (1e300) a bounded, storable charge.
 */
export const MAX_TRAINED_TOKENS = MAX_REPORTED_TOKENS * MAX_EPOCHS;

/**
 * What a job seen upstream owes: its trained tokens at the deployment's training price, once
 * it has succeeded. Nothing for a job still running, failed or cancelled (providers bill only
 * completed training), or when the deployment sets no training price. `trained_tokens` is the
 * provider's bill and is charged as reported up to MAX_TRAINED_TOKENS (one of 1e300 threw in
 * the store and the charge was lost). It is not cut at the hold's tokens: those are the file's
 * text tokens, and a vision file's images bill ~20× their text (an image_url line is ~40 text
 * tokens, ~765+ billed), so that cut charged such jobs a twentieth of their cost.
 */
export function trainingCharge(
  job: Record<string, unknown>,
  trainingPerMillionTokens: number | undefined,
): { trainedTokens: number; costUsd: number } | undefined {
  if (job.status !== 'succeeded' || trainingPerMillionTokens === undefined) return undefined;
  const reported = job.trained_tokens;
  if (typeof reported !== 'number' || !Number.isFinite(reported) || reported < 0) return undefined;
  const trained = Math.min(reported, MAX_TRAINED_TOKENS);
  // Whole micro-dollars, up, as every charge (micros.ts).
  return { trainedTokens: trained, costUsd: microsToUsd(chargedMicros(trained * trainingPerMillionTokens)) };
}

/**
 * A job that will train no more: succeeded (owes its training, once), failed or cancelled
 * (owes nothing). Its hold on the budget goes when a read sees this.
 */
export function isFinishedJob(job: Record<string, unknown>): boolean {
  return job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled';
}

/** The job's upstream creation time (ms), as every settlement claim of it names it. */
export const jobCreatedAtMs = (job: Record<string, unknown>): number =>
  typeof job.created_at === 'number' ? job.created_at * 1000 : Number.NaN;

/** A job as held work: the claim and hold a read and the sweep settle it by (`id`: its settlement id). */
export const heldJob = (owner: Owner, id: string, job: Record<string, unknown>): HeldWork => ({
  scope: 'fine_tuning_job',
  tenant: owner.tenant,
  keyId: owner.keyId,
  // The upstream's creation time, the same on every read: the in-process store refuses jobs
  // created before claims it had to forget (NaN, unknown, is refused then too).
  claim: { id, createdAt: jobCreatedAtMs(job) },
  noun: 'fine-tuning job',
});

/** The claim that settles a job once, across requests and pods; the id of its hold and its record too. */
export const settlementId = (deployment: string, upstreamId: string): string => `${deployment}/${upstreamId}`;

/**
 * The deployment a job's settlement is named by: the one that created it (its metadata says),
 * whichever deployment on the same provider account read it now. Jobs created before the
 * metadata carried it fall back to the reader, as their holds were named then.
 */
export function creatorOf(job: Record<string, unknown>, reader: string): string {
  const named = metadataOf(job)[OWNER_KEYS.deployment];
  return typeof named === 'string' && named !== '' ? named : reader;
}

/** The once-only settlement of `job` as read on `reader`. */
export const jobSettlementId = (job: Record<string, unknown>, reader: string): string =>
  settlementId(creatorOf(job, reader), String(job.id));

interface Priced {
  name: string;
  model?: string;
  pricing?: { trainingPerMillionTokens?: number | undefined } | undefined;
}

/**
 * The training price a job is charged at: its creating deployment's, wherever in the config
 * (`configured`) it is. The caller chooses the reader, so the reader's price would let it
 * pick the cheapest deployment on the same provider account. A creator unknown (a job older
 * than the metadata naming it, with no ownership record) or no longer configured is priced at
 * the dearest training price among `readable` (the deployments the caller may read it
 * through, the reader among them) that serve the job's `model`, else among all of them, so no
 * choice of reader lowers it; so is one whose creator is configured without a training price
 * (the reader's price was charged then, so a read through a priced deployment of the same
 * account was not free). The prices at settlement apply, not those at create.
 */
export function pricedTraining(
  configured: readonly Priced[],
  creator: string | undefined,
  readable: readonly Priced[],
  model?: string,
): number | undefined {
  const own = creator === undefined ? undefined : configured.find((d) => d.name === creator);
  const ownPrice = own?.pricing?.trainingPerMillionTokens;
  if (ownPrice !== undefined) return ownPrice;
  const sameModel = readable.filter((d) => model !== undefined && d.model === model);
  return dearest(sameModel.length > 0 ? sameModel : readable);
}

function dearest(ds: readonly Priced[]): number | undefined {
  let max: number | undefined;
  for (const d of ds) {
    const p = d.pricing?.trainingPerMillionTokens;
    if (p !== undefined && (max === undefined || p > max)) max = p;
  }
  return max;
}

/** The gateway model a job was created for, as its metadata says. */
export const jobModelOf = (job: Record<string, unknown>): string | undefined => {
  const m = metadataOf(job)[OWNER_KEYS.model];
  return typeof m === 'string' ? m : undefined;
};

const recordOf = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * The most epochs a job may train: the `n_epochs` of the hyperparameters that apply, or
 * MAX_EPOCHS when it leaves them to the provider (`auto`, absent, or not a positive number).
 * With `method`, only `method[method.type].hyperparameters` apply (the legacy `hyperparameters`
 * and other methods' blocks do not train): a legacy `n_epochs: 1` beside a method's `auto`
 * must not hold one epoch. `fixed` says whether the caller chose them.
 */
export function worstCaseEpochs(req: Record<string, unknown>): { epochs: number; fixed: boolean } {
  const method = recordOf(req.method);
  const hyperparameters = method
    ? recordOf(typeof method.type === 'string' ? method[method.type] : undefined)?.hyperparameters
    : req.hyperparameters;
  const n = recordOf(hyperparameters)?.n_epochs;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) return { epochs: MAX_EPOCHS, fixed: false };
  return { epochs: Math.ceil(n), fixed: true };
}

/** What a job may cost at most: every epoch over the training file's tokens, within the estimator's ceiling. */
export function trainingHoldUsd(
  trainingTokens: number,
  epochs: number,
  trainingPerMillionTokens: number | undefined,
): number {
  if (trainingPerMillionTokens === undefined || trainingTokens <= 0) return 0;
  const usd = microsToUsd(heldMicros(trainingTokens * epochs * trainingPerMillionTokens));
  return Number.isFinite(usd) ? Math.min(usd, MAX_ESTIMATE_USD) : MAX_ESTIMATE_USD;
}
