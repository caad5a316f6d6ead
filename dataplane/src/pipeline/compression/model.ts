/** The extraction model for a tenant, from the snapshot (remembered per snapshot and tenant). */
import type { Snapshot, TenantRecord } from '../../config/snapshot.ts';
import { dearestPricing } from '../../accounting/estimate.ts';
import { chooseExtractionModel, type CompressionPolicy, type ModelOption } from './policy.ts';

const optionsBySnapshot = new WeakMap<Snapshot, Map<string, ModelOption[]>>();

/** Every chat model of the snapshot, usable when the tenant's allow list has it. */
function modelOptions(snapshot: Snapshot, tenant: TenantRecord): ModelOption[] {
  let byTenant = optionsBySnapshot.get(snapshot);
  if (!byTenant) optionsBySnapshot.set(snapshot, (byTenant = new Map()));
  let options = byTenant.get(tenant.name);
  if (!options) {
    options = [...snapshot.models.values()].map((route) => {
      const p = dearestPricing(route);
      return {
        model: route.model,
        usable:
          route.capabilities.has('chat') && (tenant.models === undefined || tenant.models.has(route.model)),
        pricePerMillion: p ? p.inputPerMillionTokens + p.outputPerMillionTokens : undefined,
      };
    });
    byTenant.set(tenant.name, options);
  }
  return options;
}

export function extractionModelFor(
  snapshot: Snapshot,
  tenant: TenantRecord,
  policy: CompressionPolicy,
  requestedModel: string,
): string | undefined {
  return chooseExtractionModel(policy.extractionModel, modelOptions(snapshot, tenant), requestedModel);
}
