/**
 * Copies each published ApiKey's spend, remaining budget and last use from the shared store
 * (the Redis the data-plane pods write) into its status, at most once per interval and only
 * where the shown values changed. Runs on the leader only.
 */
import type { ApiKey, Manifest } from '@gantry/crds';
import { createStores, type Stores } from '@gantry/dataplane/stores';
import type { KubeClient } from '../kube/client.ts';
import type { ObservedObject } from '../world.ts';
import { sameSpend, spendPatch, spendStatus, type SpendStatus } from './status.ts';

export interface SpendReporterOptions {
  kube: KubeClient;
  redisUrl: string;
  redisPrefix?: string | undefined;
  intervalMs: number;
  now?: () => number;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** How far back "last used" looks: the usage log's own retention is longer, this bounds the query. */
const LAST_USE_WINDOW_DAYS = 90;

export class SpendReporter {
  private readonly stores: Stores;
  private lastRun = 0;

  constructor(private readonly opts: SpendReporterOptions) {
    this.stores = createStores({ redisUrl: opts.redisUrl, prefix: opts.redisPrefix });
  }

  /** Called after each reconcile; does nothing until the interval has passed. */
  async maybeReport(
    published: readonly Manifest[],
    observed: ReadonlyMap<string, ObservedObject>,
  ): Promise<void> {
    const now = (this.opts.now ?? Date.now)();
    if (now - this.lastRun < this.opts.intervalMs) return;
    this.lastRun = now;
    for (const m of published) {
      if (m.kind !== 'ApiKey') continue;
      const key = m as ApiKey;
      const ref = {
        tenant: key.spec.tenantRef.name,
        keyId: `${m.metadata.namespace ?? 'default'}/${m.metadata.name}`,
      };
      const budget = key.spec.budget;
      const state = budget ? await this.stores.budgets.state(ref, budget) : undefined;
      const [last] = await this.stores.usage.logs({
        tenant: ref.tenant,
        keyId: ref.keyId,
        from: day(now - LAST_USE_WINDOW_DAYS * 86_400_000),
        to: day(now),
        limit: 1,
      });
      const status = spendStatus({
        spentUsd: state?.spentUsd ?? 0,
        remainingUsd: state?.remainingUsd,
        lastUsedMs: last?.at,
      });
      const current = observed.get(`ApiKey/${m.metadata.name}`)?.status as Partial<SpendStatus> | undefined;
      if (!sameSpend(current, status))
        await this.opts.kube.patchStatus('ApiKey', m.metadata.name, spendPatch(status));
    }
  }

  async close(): Promise<void> {
    await this.stores.close();
  }
}
