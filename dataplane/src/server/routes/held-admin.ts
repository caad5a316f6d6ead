/**
 * `POST /api/v1/held-work/release` (body `{tenant_id, kind, id}`): the platform administrator
 * releases a batch's or fine-tuning job's hold on its key's budget, settling it at $0
 * (pipeline/resources/release.ts). The platform admin key only: a tenant admin is 403, since
 * releasing its own keys' holds would let it spend past its budget at will.
 */
import type { FastifyInstance } from 'fastify';
import type { ConfigStore } from '../../config/store.ts';
import { GatewayError } from '../../errors.ts';
import { releaseHeld, releaseRequest } from '../../pipeline/resources/release.ts';
import type { Stores } from '../../stores/index.ts';
import { authorizeAnalytics } from './analytics-auth.ts';

const NEEDS_PLATFORM =
  'releasing held work needs the platform admin key (GANTRY_ADMIN_KEY); no ApiKey may, a tenant admin key neither';

export interface HeldAdminDeps {
  config: ConfigStore;
  stores: Pick<Stores, 'ownership' | 'budgets'>;
  adminKeyHash: Buffer | undefined;
}

export function registerHeldAdminRoutes(app: FastifyInstance, deps: HeldAdminDeps): void {
  app.post('/api/v1/held-work/release', async (request) => {
    const snapshot = deps.config.current();
    if (authorizeAnalytics(request.headers, snapshot, deps.adminKeyHash, NEEDS_PLATFORM).kind !== 'platform')
      throw new GatewayError('permission_denied', NEEDS_PLATFORM);
    const req = releaseRequest(request.body);
    const { record, released } = await releaseHeld(deps.stores, snapshot, req);
    request.log.info(
      { tenant: record.tenant, keyId: record.keyId, [record.family]: record.id, released },
      released ? 'held work released by the platform admin' : 'held work already settled; nothing released',
    );
    return {
      released,
      tenant_id: record.tenant,
      key_id: record.keyId,
      kind: record.family,
      id: req.id,
      // What the work held at its creation (released now, unless it was settled already).
      held_usd: record.estimateUsd ?? 0,
    };
  });
}
