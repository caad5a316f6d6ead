/**
 * Model names the configuration does not know, as analytics and the rate limit see them.
 * A caller chooses the name it sends: recorded as it came, every made-up name would be a new
 * rollup cell and models-index entry kept for the retention period, and a refusal answered
 * before admission would cost the caller nothing against its rate limit. So a name the
 * snapshot does not know is recorded under one label, and its refusal counts as a request.
 */
import { notServedHere, type Snapshot } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import type { Stores } from '../stores/index.ts';
import { countRefused } from './admission.ts';
import type { RequestContext } from './context.ts';

/** The usage record's `model` for a name the configuration does not know. */
export const UNKNOWN_MODEL = '(unknown)';

/** A configured model (served here or left out of this pod) is itself; any other name is one label. */
export function recordedModel(snapshot: Pick<Snapshot, 'models' | 'leftOut'>, name: string): string {
  if (name === '' || snapshot.models.has(name) || notServedHere(snapshot, name)) return name;
  return UNKNOWN_MODEL;
}

/** The name a refusal is of: the one its error carries, else the one the request noted. */
const refusedName = (
  ctx: Pick<RequestContext, 'usage'>,
  error: Partial<Pick<GatewayError, 'refusedModel'>>,
): string | undefined => error.refusedModel ?? ctx.usage.requestedModel;

/**
 * Whether a refusal is of a model (or A2A agent) the configuration does not know, answered
 * before the request was admitted: the 404 a made-up name gets. Pure; see `countUnknownRefusal`.
 */
export function isUnadmittedUnknownRefusal(
  ctx: Pick<RequestContext, 'snapshot' | 'usage' | 'admission'>,
  error: Pick<GatewayError, 'status'> & Partial<Pick<GatewayError, 'refusedModel'>>,
): boolean {
  // The name the error refused first: a route that looked the name up before noting it in
  // the usage record must not let the refusal go uncounted.
  const name = refusedName(ctx, error);
  return (
    error.status === 404 &&
    ctx.admission === undefined &&
    name !== undefined &&
    recordedModel(ctx.snapshot, name) === UNKNOWN_MODEL
  );
}

/**
 * The answer to a refusal, after counting it against the key's request rate when it is the
 * refusal of an unknown model (the rule of `countRefused`: refusals no faster than answers).
 * Past the limit the answer is the 429 instead. Any other failure of the count leaves the
 * refusal as it was: the request is refused either way.
 */
export async function countUnknownRefusal(
  stores: Stores,
  ctx: RequestContext,
  error: GatewayError,
): Promise<GatewayError> {
  if (!isUnadmittedUnknownRefusal(ctx, error)) return error;
  // Recorded under the label, not as "" when the route had not noted the name yet.
  if (!ctx.usage.requestedModel) ctx.usage.requestedModel = refusedName(ctx, error);
  try {
    await countRefused(stores, ctx);
    return error;
  } catch (err) {
    return err instanceof GatewayError ? err : error;
  }
}
