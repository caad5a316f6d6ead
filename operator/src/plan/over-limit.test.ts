/**
 * Over the limit, the last published snapshot is the base: what it may keep, and what must
 * reach pods anyway (credentials, privilege reductions), whatever the size.
 */
import { createHash } from 'node:crypto';
import type { KindName } from '@gantry/crds';
import { compilePublished } from '@gantry/dataplane/config/published';
import { describe, expect, it } from 'vitest';
import type { ObservedObject, World } from '../world.ts';
import { plan, snapshotText, type Plan } from './plan.ts';

let uid = 0;
let clock = 0;
const obj = (kind: KindName, name: string, spec: object): ObservedObject => ({
  kind,
  metadata: {
    name,
    namespace: 'gantry',
    uid: `uid-${String(++uid).padStart(6, '0')}`,
    generation: 1,
    creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, ++clock)).toISOString(),
  },
  spec,
});
/** Model names that do not compress: 8,000 of them take about 270 KB gzipped. */
const names = (t: string, n = 8000) =>
  Array.from({ length: n }, (_, i) => createHash('sha256').update(`${t}-${i}`).digest('hex'));
const md = (name: string, secret = 'openai', key = 'apiKey', baseUrl = 'http://127.0.0.1:1/v1') =>
  obj('ModelDeployment', name, {
    model: 'gpt-4o-mini',
    provider: 'openai',
    upstreamModel: 'gpt-4o-mini',
    baseUrl,
    credentialsSecretRef: { name: secret, key },
  });
const tenant = (name: string, models: string[], extra: object = {}) =>
  obj('Tenant', name, { tier: 'pro', models, ...extra });
type Secrets = [string, Record<string, string>][];
const world = (objects: ObservedObject[], secrets: Secrets, before?: Plan): World => ({
  namespace: 'gantry',
  objects,
  secrets: new Map(secrets),
  snapshotSecret: 'gantry-snapshot',
  generatedKeys: new Map(),
  published: before ? { manifests: before.manifests, credentials: before.credentials } : undefined,
});
const verdict = (p: Plan, kind: KindName, name: string) =>
  p.verdicts.find((x) => x.kind === kind && x.name === name);
const servable = (p: Plan) =>
  expect(compilePublished(snapshotText(p, 2), { env: {}, source: 't' }).ok).toBe(true);

describe('over the limit', () => {
  const gpt = md('gpt-a');
  const acme = tenant('acme', ['gpt-4o-mini']);
  const ci = obj('ApiKey', 'ci', { tenantRef: { name: 'acme' }, secretRef: { name: 'ci-key' } });
  const bigs = ['t1', 't2', 't3'].map((t) => tenant(t, names(t)));
  const t4 = tenant('t4', names('t4'));
  const secrets: Secrets = [
    ['openai', { apiKey: 'sk-OLD' }],
    ['ci-key', { key: 'sk-ci' }],
  ];
  const before = plan(world([gpt, acme, ci, ...bigs], secrets));

  it('fits before t4 comes', () => {
    expect(before.tooLarge).toBeUndefined();
    expect(before.credentials['gpt-a']).toBe('sk-OLD');
  });

  it('publishes a rotated provider credential', () => {
    const rotated: Secrets = [
      ['openai', { apiKey: 'sk-NEW' }],
      ['ci-key', { key: 'sk-ci' }],
    ];
    const p = plan(world([gpt, acme, ci, ...bigs, t4], rotated, before));
    expect(p.tooLarge).toBeDefined();
    expect(p.credentials['gpt-a']).toBe('sk-NEW');
    expect(verdict(p, 'ModelDeployment', 'gpt-a')?.reason).toBe('Published');
    expect(verdict(p, 'Tenant', 't4')?.reason).toBe('SnapshotTooLarge');
    servable(p);
  });
});
