/** The session's caller looked up again in a newer snapshot: who may go on, on what terms. */
import { describe, expect, it } from 'vitest';
import { compile, type LocatedManifest } from '../config/compile.ts';
import { parseManifests } from '../config/load.ts';
import type { Snapshot } from '../config/snapshot.ts';
import { callerNow } from './caller.ts';

const HASH = 'a'.repeat(64);
const ROTATED = 'b'.repeat(64);

const doc = (kind: string, name: string, spec: Record<string, unknown>): string =>
  `---\n${JSON.stringify({ apiVersion: 'gantry.dev/v1alpha1', kind, metadata: { name }, spec })}\n`;
const deployment = (price: number) =>
  doc('ModelDeployment', 'rt', {
    model: 'gpt-rt',
    provider: 'openai',
    upstreamModel: 'gpt-rt',
    capabilities: ['realtime'],
    pricing: { inputPerMillionTokens: price, outputPerMillionTokens: price },
  });
const tenant = (models: string[]) => doc('Tenant', 'dev', { models });
const key = (hash: string, limitUsd: number) =>
  doc('ApiKey', 'alice', {
    tenantRef: { name: 'dev' },
    keyHash: hash,
    budget: { limitUsd, period: 'monthly' },
  });

function snapshotOf(text: string): Snapshot {
  const { items, errors } = parseManifests(text, 'gantry.yaml');
  expect(errors).toEqual([]);
  const result = compile(items as LocatedManifest[], {
    env: { OPENAI_API_KEY: 'x' },
    version: 1,
    source: 'f',
  });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.snapshot;
}

const admitted = snapshotOf(deployment(1) + tenant(['*']) + key(HASH, 100));
const caller = admitted.keys.get(HASH)!;
const served = admitted.models.get('gpt-rt')!.deployments[0]!;

describe('callerNow', () => {
  it('takes the key, budget and prices as the newer snapshot has them', () => {
    const now = callerNow(
      snapshotOf(deployment(7) + tenant(['*']) + key(HASH, 0.5)),
      caller,
      'gpt-rt',
      served,
    );
    expect(now.ok).toBe(true);
    if (!now.ok) return;
    expect(now.key.spec.budget?.limitUsd).toBe(0.5);
    expect(now.deployment.pricing?.inputPerMillionTokens).toBe(7);
  });

  it('refuses a key removed, rotated or no longer allowed the model', () => {
    const removed = callerNow(snapshotOf(deployment(1) + tenant(['*'])), caller, 'gpt-rt', served);
    expect(removed).toEqual({ ok: false, reason: 'the API key was removed or rotated' });
    const rotated = callerNow(
      snapshotOf(deployment(1) + tenant(['*']) + key(ROTATED, 100)),
      caller,
      'gpt-rt',
      served,
    );
    expect(rotated.ok).toBe(false);
    const narrowed = callerNow(
      snapshotOf(deployment(1) + tenant(['other']) + key(HASH, 100)),
      caller,
      'gpt-rt',
      served,
    );
    expect(narrowed).toEqual({ ok: false, reason: 'the API key may no longer use model gpt-rt' });
  });
});
