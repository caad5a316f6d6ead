/** The usage records requests left: today's for a tenant, or one found by its request id. */
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import type { Stack } from './stack.ts';

/** A tenant's usage records of today (UTC), newest first. */
export function usageToday(stack: Stack, tenant: string, limit = 1000): Promise<UsageRecord[]> {
  const today = new Date().toISOString().slice(0, 10);
  return stack.gateway.stores.usage.logs({ tenant, from: today, to: today, limit });
}

/** The usage record a request left, found by its `x-gantry-request-id`. */
export async function usageRecord(stack: Stack, tenant: string, id: string | null): Promise<UsageRecord> {
  const found = (await usageToday(stack, tenant)).find((r) => r.id === id);
  if (!found) throw new Error(`no usage record ${String(id)} for tenant ${tenant}`);
  return found;
}
