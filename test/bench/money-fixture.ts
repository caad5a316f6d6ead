/**
 * The metered key the store-level money tools (money-micro.ts, money-redis-time.ts) admit and
 * settle: limits and a budget far from refusing, and the usage record of a ~1 KB chat turn.
 */
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';

export const key = { tenant: 'bench-wallet', keyId: 'bench-metered' };
export const limits = { requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000 };
export const budget = { limitUsd: 1_000_000, period: 'monthly' as const };

export function record(id: string): UsageRecord {
  return {
    id,
    at: Date.now(),
    tenant: key.tenant,
    keyId: key.keyId,
    endpoint: 'chat',
    requestedModel: 'gpt-4o-mini',
    model: 'gpt-4o-mini',
    deployment: 'bench-openai',
    provider: 'openai',
    euResident: false,
    status: 200,
    errorType: undefined,
    stream: false,
    attempts: 1,
    promptTokens: 250,
    completionTokens: 12,
    totalTokens: 262,
    costUsd: 0.0000447,
    latencyMs: 1,
    cache: undefined,
    guardrails: undefined,
    compression: undefined,
    routing: undefined,
  };
}
