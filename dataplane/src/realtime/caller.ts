/**
 * A Realtime session lasts up to an hour; the config it was admitted under may not. Before each
 * response and on every reload the session's caller is looked up again in the serving snapshot:
 * a key removed or rotated (or its tenant gone, or the model no longer allowed to it) ends the
 * session, as the next HTTP request would be refused; otherwise later holds, settlements and
 * guardrails use the key, tenant and deployment prices as they are now.
 */
import type { Deployment, KeyRecord, Snapshot, TenantRecord } from '../config/snapshot.ts';
import { mayUse } from '../pipeline/context.ts';

export type CallerNow =
  | { ok: true; key: KeyRecord; tenant: TenantRecord; snapshot: Snapshot; deployment: Deployment }
  | { ok: false; reason: string };

export function callerNow(
  snapshot: Snapshot,
  key: KeyRecord,
  model: string,
  deployment: Deployment,
): CallerNow {
  // Keyed by the key's hash: a rotated key (same id, new secret) is not found either.
  const current = snapshot.keys.get(key.hash.toString('hex'));
  const tenant = current && snapshot.tenants.get(current.tenant);
  if (!current || !tenant || current.id !== key.id)
    return { ok: false, reason: 'the API key was removed or rotated' };
  if (!mayUse({ key: current, tenant, snapshot }, model))
    return { ok: false, reason: `the API key may no longer use model ${model}` };
  // The open upstream stays on its deployment; removed from the config, its last prices still apply.
  const now = snapshot.models.get(deployment.model)?.deployments.find((d) => d.name === deployment.name);
  return { ok: true, key: current, tenant, snapshot, deployment: now ?? deployment };
}
