/** Test support: usage records stating only what a test cares about. */
import type { UsageRecord } from '../../accounting/usage.ts';

let seq = 0;

export const T0 = Date.parse('2025-03-14T12:00:00Z');
export const DAY_MS = 86_400_000;

export function usageRecord(over: Partial<UsageRecord> = {}): UsageRecord {
  seq++;
  const prompt = over.promptTokens ?? 100;
  const completion = over.completionTokens ?? 50;
  return {
    id: `req-${seq}-${Math.random().toString(36).slice(2)}`,
    at: T0,
    tenant: 'acme',
    keyId: 'default/acme-ci',
    endpoint: 'chat',
    requestedModel: over.model ?? 'gpt-4o-mini',
    model: 'gpt-4o-mini',
    deployment: 'gpt-4o-mini-eu',
    provider: 'openai',
    euResident: true,
    status: 200,
    errorType: undefined,
    stream: false,
    attempts: 1,
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    costUsd: 0.000045,
    latencyMs: 120,
    cache: undefined,
    guardrails: undefined,
    compression: undefined,
    routing: undefined,
    ...over,
  };
}
