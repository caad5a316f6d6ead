/** The usage record a request left, found by its `x-gantry-request-id`. */
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import type { Stack } from './stack.ts';

export async function usageRecord(stack: Stack, tenant: string, id: string | null): Promise<UsageRecord> {
  const today = new Date().toISOString().slice(0, 10);
  const records = await stack.gateway.stores.usage.logs({ tenant, from: today, to: today, limit: 1000 });
  const found = records.find((r) => r.id === id);
  if (!found) throw new Error(`no usage record ${String(id)} for tenant ${tenant}`);
  return found;
}
