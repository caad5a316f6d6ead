/**
 * Over the limit, the last published snapshot is the base: what it may keep, and what must
 * reach pods anyway (credentials, privilege reductions), whatever the size.
 */
import { createHash } from 'node:crypto';
import type { KindName } from '@gantry/crds';
import { compilePublished } from '@gantry/dataplane/config/published';
import { afterEach, describe, expect, it } from 'vitest';
import type { ObservedObject, World } from '../world.ts';
import { PlanMemo } from './memo.ts';
import {
  CREDENTIALS_LABEL,
  MAX_SNAPSHOT_BYTES,
  plan,
  readPublished,
  sizeAgainstLimit,
  snapshotSecretData,
  snapshotText,
  type Plan,
} from './plan.ts';

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
/** Every Secret opted in for its use (*-key an ApiKey's key, others provider) unless `unlabelled` names it. */
const world = (
  objects: ObservedObject[],
  secrets: Secrets,
  before?: Plan,
  unlabelled: string[] = [],
): World => ({
  namespace: 'gantry',
  objects,
  secrets: new Map(secrets),
  secretLabels: new Map(
    secrets
      .filter(([name]) => !unlabelled.includes(name))
      .map(([name]) => [name, { [CREDENTIALS_LABEL]: name.endsWith('-key') ? 'apikey' : 'provider' }]),
  ),
  snapshotSecret: 'gantry-snapshot',
  generatedKeys: new Map(),
  published: before && (() => before),
  // These build single objects of 0.5 to 1.6 MB to fill the Secret with few of them: the
  // per-object cap (object-size.test.ts) is raised, as they test the selection among them.
  maxObjectBytes: 8 * 1024 * 1024,
});
const verdict = (p: Plan, kind: KindName, name: string) =>
  p.verdicts.find((x) => x.kind === kind && x.name === name);
const published = (p: Plan, kind: KindName, name: string) =>
  p.manifests.find((m) => m.kind === kind && m.metadata.name === name);
const servable = (p: Plan) =>
  expect(compilePublished(snapshotText(p, 2), { env: {}, source: 't' }).ok).toBe(true);

// Every test here is synchronous gzip work, seconds each: without a turn of the event loop
// between them, the worker answered none of vitest's calls for over a minute on a loaded
// machine, and the run failed with "Timeout calling onTaskUpdate" though every test passed.
afterEach(() => new Promise<void>((resolve) => setImmediate(resolve)));

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

  it('drops a deployment whose credential Secret was deleted', () => {
    const p = plan(world([gpt, acme, ci, ...bigs, t4], [['ci-key', { key: 'sk-ci' }]], before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'ModelDeployment', 'gpt-a')).toBeUndefined();
    expect(p.credentials['gpt-a']).toBeUndefined();
    expect(verdict(p, 'ModelDeployment', 'gpt-a')?.reason).toBe('SecretNotFound');
    servable(p);
  });

  it('drops a deployment whose credential Secret lost its opt-in label', () => {
    const p = plan(world([gpt, acme, ci, ...bigs, t4], secrets, before, ['openai']));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'ModelDeployment', 'gpt-a')).toBeUndefined();
    expect(Object.values(p.credentials)).not.toContain('sk-OLD');
    expect(verdict(p, 'ModelDeployment', 'gpt-a')?.reason).toBe('SecretNotLabelled');
    servable(p);
  });

  it("drops a deployment that now names an ApiKey's key, so the key is not sent to its baseUrl", () => {
    // Published when no ApiKey used ci-key (or by an operator before the rule).
    const evil = md('evil', 'ci-key', 'key', 'http://evil.example/v1');
    // Its owner had labelled it for a provider, since relabelled.
    const asProvider = new Map([['ci-key', { [CREDENTIALS_LABEL]: 'provider' }]]);
    const was = plan({
      ...world([acme, evil, ...bigs], [['ci-key', { key: 'sk-ci-SECRET' }]]),
      secretLabels: asProvider,
    });
    expect(was.credentials.evil).toBe('sk-ci-SECRET');
    const p = plan(world([acme, evil, ...bigs, ci, t4], [['ci-key', { key: 'sk-ci-SECRET' }]], was));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'ModelDeployment', 'evil')).toBeUndefined();
    expect(Object.values(p.credentials)).not.toContain('sk-ci-SECRET');
    expect(verdict(p, 'ModelDeployment', 'evil')?.reason).toBe('SecretNotAllowed');
    servable(p);
  });

  it('drops an object that no longer validates, and keeps one left out only for size', () => {
    const grown = { ...bigs[0]!, spec: { tier: 'pro', models: names('t1', 24000) } };
    const broken = { ...bigs[1]!, spec: { tier: 'nope', models: ['gpt-4o-mini'] } };
    const p = plan(world([gpt, acme, ci, grown, broken, bigs[2]!, t4], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(verdict(p, 'Tenant', 't1')?.reason).toBe('SnapshotTooLarge');
    expect(published(p, 'Tenant', 't1')).toEqual(published(before, 'Tenant', 't1'));
    expect(verdict(p, 'Tenant', 't2')?.reason).toBe('InvalidSpec');
    expect(published(p, 'Tenant', 't2')).toBeUndefined();
  });

  it("a published base with one manifest today's schema refuses still keeps the others' last versions", () => {
    // As the controller reads it back from the snapshot Secret, t2 as an older schema allowed.
    const doc = JSON.parse(snapshotText(before, 3)) as {
      manifests: { kind: string; metadata: { name: string } }[];
    };
    const t2 = doc.manifests.findIndex((m) => m.kind === 'Tenant' && m.metadata.name === 't2');
    doc.manifests[t2] = {
      ...doc.manifests[t2]!,
      spec: { tier: 'nope', models: [] },
    } as (typeof doc.manifests)[number];
    const base = readPublished(snapshotSecretData(JSON.stringify(doc)));
    expect(base).toBeDefined();
    const grown = { ...bigs[0]!, spec: { tier: 'pro', models: names('t1', 24000) } };
    const w = world([gpt, acme, ci, grown, bigs[1]!, bigs[2]!, t4], secrets);
    const p = plan({ ...w, published: () => base! });
    expect(p.tooLarge).toBeDefined();
    // t1's last version keeps serving, from the base.
    expect(verdict(p, 'Tenant', 't1')?.reason).toBe('SnapshotTooLarge');
    expect(published(p, 'Tenant', 't1')).toEqual(published(before, 'Tenant', 't1'));
    expect(published(p, 'ModelDeployment', 'gpt-a')).toBeDefined();
    servable(p);
  });

  it('applies privilege reductions and changes that do not grow, behind frozen larger ones', () => {
    const hs = ['h1', 'h2', 'h3', 'h4', 'h5'].map((h) => tenant(h, ['gpt-4o-mini']));
    const adm = obj('ApiKey', 'adm', {
      tenantRef: { name: 'acme' },
      secretRef: { name: 'adm-key' },
      role: 'admin',
    });
    const wide = tenant('wide', ['gpt-4o-mini', 'gpt-4o', 'o3']);
    const sec: Secrets = [...secrets, ['adm-key', { key: 'sk-adm' }]];
    const was = plan(world([gpt, acme, ci, ...bigs, ...hs, adm, wide], sec));
    expect(was.tooLarge).toBeUndefined();
    // Five older tenants each grow past what fits: the freeze after them holds back what is later.
    const grown = hs.map((h) => ({ ...h, spec: { tier: 'pro', models: names(h.metadata.name) } }));
    const demoted = { ...adm, spec: { ...(adm.spec as object), role: 'user' } };
    const budgeted = { ...ci, spec: { ...(ci.spec as object), budget: { limitUsd: 10, period: 'monthly' } } };
    const narrowed = { ...wide, spec: { tier: 'pro', models: ['gpt-4o-mini'] } };
    const p = plan(world([gpt, acme, budgeted, ...bigs, ...grown, demoted, narrowed], sec, was));
    expect(p.tooLarge).toBeDefined();
    expect(verdict(p, 'Tenant', 'h1')?.reason).toBe('SnapshotTooLarge');
    expect(published(p, 'ApiKey', 'adm')?.spec).toMatchObject({ role: 'user' });
    expect(verdict(p, 'ApiKey', 'adm')?.reason).toBe('Published');
    expect(published(p, 'ApiKey', 'ci')?.spec).toMatchObject({ budget: { limitUsd: 10 } });
    expect(published(p, 'Tenant', 'wide')?.spec).toMatchObject({ models: ['gpt-4o-mini'] });
    expect(verdict(p, 'Tenant', 'wide')?.reason).toBe('Published');
    servable(p);
  });

  it('holds back an ApiKey edit that would grow the base past the limit', () => {
    const greedy = obj('ApiKey', 'greedy', {
      tenantRef: { name: 'acme' },
      secretRef: { name: 'g-key' },
      models: ['a'],
    });
    const sec: Secrets = [...secrets, ['g-key', { key: 'sk-g' }]];
    const was = plan(world([gpt, acme, ci, ...bigs, greedy], sec));
    expect(was.tooLarge).toBeUndefined();
    const grown = { ...greedy, spec: { ...(greedy.spec as object), models: names('greedy', 9000) } };
    const p = plan(world([gpt, acme, ci, ...bigs, grown], sec, was));
    expect(p.tooLarge).toBeDefined();
    expect(sizeAgainstLimit(p)).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
    expect(published(p, 'ApiKey', 'greedy')?.spec).toMatchObject({ models: ['a'] });
    expect(verdict(p, 'ApiKey', 'greedy')?.reason).toBe('SnapshotTooLarge');
  });

  describe('remembering', () => {
    // Five tenants that do not fit, each skipped in its own round of gzips, and keys that do.
    const keys = Array.from({ length: 300 }, (_, i) =>
      obj('ApiKey', `k${i}`, {
        tenantRef: { name: 'acme' },
        keyHash: createHash('sha256').update(`k${i}`).digest('hex'),
      }),
    );
    const huge = ['u1', 'u2', 'u3', 'u4'].map((t) => tenant(t, names(t)));
    const over = world([gpt, acme, ci, ...bigs, t4, ...keys, ...huge], secrets, before);
    /** A deep copy: equal content, no object shared. */
    const copy = (w: World): World => ({
      ...structuredClone({ ...w, published: undefined }),
      published: w.published && (() => structuredClone(w.published!())),
    });
    /** The published snapshot as the controller hands it: read once per Secret version. */
    const readVia = (w: World, memo: PlanMemo, resourceVersion: string): World => ({
      ...w,
      published: () => memo.published(resourceVersion, () => structuredClone(before)),
    });

    it('an unchanged world costs no gzip, no read of the published snapshot and no selection', () => {
      const memo = new PlanMemo();
      const first = plan(readVia(over, memo, '7'), memo);
      expect(first.tooLarge).toBeDefined();
      expect(memo.work()).toEqual({ measures: 1, publishedReads: 1, selections: 1 });
      // Before, every plan measured the whole snapshot (a gzip of all of its JSON) and read the
      // published one (a gunzip and a parse) before it found the selection remembered.
      const again = plan(readVia(copy(over), memo, '7'), memo);
      expect(memo.work()).toEqual({ measures: 1, publishedReads: 1, selections: 1 });
      expect(again).toEqual(first);
      // A new version of the Secret is read again; with the same content, nothing else runs.
      expect(plan(readVia(copy(over), memo, '8'), memo)).toEqual(first);
      expect(memo.work()).toEqual({ measures: 1, publishedReads: 2, selections: 1 });
    });

    it('under the limit, the published snapshot is never read', () => {
      let reads = 0;
      const memo = new PlanMemo();
      const fits = world([gpt, acme, ci, ...bigs], secrets);
      const p = plan({ ...fits, published: () => (reads++, before) }, memo);
      expect(p.tooLarge).toBeUndefined();
      expect(reads).toBe(0);
      plan({ ...copy(fits), published: () => (reads++, before) }, memo);
      expect(reads).toBe(0);
      expect(memo.work()).toEqual({ measures: 1, publishedReads: 0, selections: 0 });
    });

    it('remembers its selection, so an unchanged world costs no gzip bisection', () => {
      const memo = new PlanMemo();
      const first = plan(over, memo);
      expect(memo.work().selections).toBe(1);
      const again = plan(copy(over), memo);
      expect(memo.work().selections).toBe(1);
      expect(first.tooLarge).toBeDefined();
      expect(verdict(first, 'ApiKey', 'k299')?.reason).toBe('Published');
      expect(again).toEqual(first);
      // A changed world is computed again.
      plan(world([gpt, acme, ci, ...bigs, t4, ...keys.slice(1), ...huge], secrets, before), memo);
      expect(memo.work().selections).toBe(2);
    });

    it("is each operator's own: two in one process do not share what they remember", () => {
      const a = new PlanMemo();
      const b = new PlanMemo();
      const fromA = plan(over, a);
      expect(a.work().selections).toBe(1);
      // b has not seen this world: it computes (a module-wide memo answered from a's).
      const fromB = plan(over, b);
      expect(b.work().selections).toBe(1);
      expect(fromB).toEqual(fromA);
      // Without a memo, nothing is remembered and nothing is counted anywhere.
      expect(plan(over)).toEqual(fromA);
      expect([a.work().selections, b.work().selections]).toEqual([1, 1]);
    });
  });

  describe('an edit whose old version no longer compiles', () => {
    const hs = ['h1', 'h2', 'h3', 'h4', 'h5'].map((h) => tenant(h, ['gpt-4o-mini']));
    const pol = obj('GuardrailPolicy', 'pii', { pii: { action: 'block' } });
    const guarded = tenant('acme', ['gpt-4o-mini'], { guardrails: { policyRef: { name: 'pii' } } });
    const was = plan(world([gpt, guarded, ci, ...bigs, ...hs, pol], secrets));
    // Five older tenants grow past what fits, so the freeze holds back acme's edit.
    const grown = hs.map((h) => ({ ...h, spec: { tier: 'pro', models: names(h.metadata.name) } }));

    it('publishes the new version when it fits, so the tenant and its keys stay up', () => {
      expect(was.tooLarge).toBeUndefined();
      // The policy is dropped from the tenant (which grows, by models) and then deleted.
      const more = ['gpt-4o', 'gpt-4.1', 'gpt-4.1-mini', 'o3', 'o3-mini', 'o1'];
      const edited = { ...guarded, spec: { tier: 'pro', models: ['gpt-4o-mini', ...more] } };
      const p = plan(world([gpt, edited, ci, ...bigs, ...grown], secrets, was));
      expect(p.tooLarge).toBeDefined();
      expect(published(p, 'Tenant', 'acme')?.spec).toEqual(edited.spec);
      expect(published(p, 'ApiKey', 'ci')).toBeDefined();
      servable(p);
    });

    it('says so when the new version does not fit either', () => {
      // Dropping a policyRef is not a loosening the plan knows, so the edit is withheld: its
      // old version is not served (it would not compile anyway), nor the new one.
      const edited = { ...guarded, spec: { tier: 'pro', models: ['gpt-4o-mini', ...names('acme', 9000)] } };
      const p = plan(world([gpt, edited, ci, ...bigs, ...grown], secrets, was));
      expect(p.tooLarge).toBeDefined();
      expect(published(p, 'Tenant', 'acme')).toBeUndefined();
      expect(verdict(p, 'Tenant', 'acme')).toMatchObject({
        reason: 'SnapshotTooLarge',
        message: expect.stringContaining('neither its previous version nor this one is served') as unknown,
      });
      servable(p);
    });
  });
});

describe('over the limit, behind five skips', () => {
  // Five older tenants whose growth (models added) does not fit: five skips, then every later
  // change waits.
  const hs = ['h1', 'h2', 'h3', 'h4', 'h5'].map((h) => tenant(h, ['gpt-4o-mini']));
  const grown = hs.map((h) => ({
    ...h,
    spec: { tier: 'pro', models: ['gpt-4o-mini', ...names(h.metadata.name)] },
  }));
  const gpt = md('gpt', 'old', 'apiKey', 'http://vllm.old.internal/v1');
  const acme = tenant('acme', ['*']);
  const beta = tenant('beta', ['gpt-4o-mini']);
  const bigs = ['t1', 't2', 't3'].map((t) => tenant(t, names(t)));
  const secrets: Secrets = [
    ['old', { apiKey: 'sk-OLD' }],
    ['new', { apiKey: 'sk-NEW-PROVIDER' }],
  ];
  const before = plan(world([...hs, gpt, acme, beta, ...bigs], secrets));

  it('fits before the tenants grow', () => {
    expect(before.tooLarge).toBeUndefined();
    expect(before.credentials.gpt).toBe('sk-OLD');
  });

  it("never pairs today's credential with the old manifest's host: the move is applied", () => {
    const moved = {
      ...gpt,
      spec: {
        ...(gpt.spec as object),
        baseUrl: 'https://api.openai.com/v1/with-a-longer-path',
        credentialsSecretRef: { name: 'new', key: 'apiKey' },
      },
    };
    const p = plan(world([...grown, moved, acme, beta, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    const m = published(p, 'ModelDeployment', 'gpt') as { spec: { baseUrl: string } } | undefined;
    expect(m?.spec.baseUrl).toBe('https://api.openai.com/v1/with-a-longer-path');
    expect(p.credentials.gpt).toBe('sk-NEW-PROVIDER');
    servable(p);
  });

  it("applies a tenant narrowed from '*' to one model, though its JSON grew", () => {
    const narrowed = { ...acme, spec: { tier: 'pro', models: ['gpt-4o-mini'] } };
    const p = plan(world([...grown, gpt, narrowed, beta, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect((published(p, 'Tenant', 'acme') as { spec: { models: string[] } }).spec.models).toEqual([
      'gpt-4o-mini',
    ]);
    servable(p);
  });

  it('applies a wallet added to a tenant', () => {
    const walled = { ...acme, spec: { tier: 'pro', models: ['*'], wallet: { balanceUsd: 5 } } };
    const p = plan(world([...grown, gpt, walled, beta, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'Tenant', 'acme')?.spec).toEqual(walled.spec);
    servable(p);
  });

  it('publishes a new GuardrailPolicy with the tenant that starts naming it', () => {
    // The policy is newer than the skipped tenants, so alone it would wait behind them; the
    // tenant's edit is applied at once, and without its policy it did not compile: acme and its
    // keys went dark until the policy fit.
    const pii = obj('GuardrailPolicy', 'pii', { pii: { action: 'block' } });
    const guarded = {
      ...acme,
      spec: { tier: 'pro', models: ['*'], guardrails: { policyRef: { name: 'pii' } } },
    };
    const p = plan(world([...grown, gpt, guarded, beta, ...bigs, pii], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'Tenant', 'acme')?.spec).toEqual(guarded.spec);
    expect(published(p, 'GuardrailPolicy', 'pii')).toBeDefined();
    expect(verdict(p, 'Tenant', 'acme')?.reason).toBe('Published');
    servable(p);
  });

  it('lets a tenant that only gains models wait like any change', () => {
    const wider = { ...beta, spec: { tier: 'pro', models: ['gpt-4o-mini', '*'] } };
    const p = plan(world([...grown, gpt, acme, wider, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(verdict(p, 'Tenant', 'beta')?.reason).toBe('SnapshotTooLarge');
    expect((published(p, 'Tenant', 'beta') as { spec: { models: string[] } }).spec.models).toEqual([
      'gpt-4o-mini',
    ]);
  });

  it('leaves out a narrowed tenant whose growth does not fit, rather than keep its wider version', () => {
    // '*' replaced by a long list: narrower, and too large to go in; the other narrowing fits.
    const huge = { ...acme, spec: { tier: 'pro', models: names('acme', 30000) } };
    const small = { ...hs[0]!, spec: { tier: 'free', models: ['gpt-4o-mini'] } };
    const p = plan(world([small, ...grown.slice(1), gpt, huge, beta, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'Tenant', 'acme')).toBeUndefined();
    expect(verdict(p, 'Tenant', 'acme')?.reason).toBe('SnapshotTooLarge');
    expect(published(p, 'Tenant', 'h1')?.spec).toEqual(small.spec);
    servable(p);
  });
});

describe('over the limit, a ModelDeployment edit that keeps its target', () => {
  // Five older tenants grow past what fits: five skips, then every later change waits.
  const hs = ['h1', 'h2', 'h3', 'h4', 'h5'].map((h) => tenant(h, ['gpt-4o-mini']));
  const grown = hs.map((h) => ({
    ...h,
    spec: { tier: 'pro', models: ['gpt-4o-mini', ...names(h.metadata.name)] },
  }));
  const priced = obj('ModelDeployment', 'gpt', {
    ...(md('gpt').spec as object),
    pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2 },
    rpm: 100,
  });
  const acme = tenant('acme', ['gpt-4o-mini']);
  const bigs = ['t1', 't2', 't3'].map((t) => tenant(t, names(t)));
  const secrets: Secrets = [['openai', { apiKey: 'sk-1' }]];
  const before = plan(world([...hs, priced, acme, ...bigs], secrets));
  const withSpec = (spec: object) => ({ ...priced, spec: { ...(priced.spec as object), ...spec } });
  const specOf = (p: Plan) => published(p, 'ModelDeployment', 'gpt')?.spec;

  it('fits before the tenants grow', () => {
    expect(before.tooLarge).toBeUndefined();
  });

  it('applies a raised price at once, though its JSON grew', () => {
    const dearer = withSpec({ pricing: { inputPerMillionTokens: 1.25, outputPerMillionTokens: 2.5 } });
    const p = plan(world([...grown, dearer, acme, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    // Before, it waited behind the skipped tenants: every request charged the old price.
    expect(specOf(p)).toEqual(dearer.spec);
    expect(verdict(p, 'ModelDeployment', 'gpt')?.reason).toBe('Published');
    servable(p);
  });

  it('applies an rpm lowered and a tpm added at once', () => {
    const limited = withSpec({ rpm: 10, tpm: 100000 });
    const p = plan(world([...grown, limited, acme, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(specOf(p)).toEqual(limited.spec);
    servable(p);
  });

  it('lets a lowered price or raised rpm wait at the old version, which serves', () => {
    const cheaper = withSpec({
      pricing: { inputPerMillionTokens: 0.999999, outputPerMillionTokens: 2 },
      rpm: 1000,
    });
    const p = plan(world([...grown, cheaper, acme, ...bigs], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(specOf(p)).toEqual(priced.spec);
    expect(verdict(p, 'ModelDeployment', 'gpt')).toMatchObject({
      reason: 'SnapshotTooLarge',
      message: expect.stringContaining('its previous version keeps serving') as unknown,
    });
  });
});

describe('over the limit, with no room left: only loosening edits wait', () => {
  /** Incompressible filler of exactly len characters. */
  const filler = (len: number) => {
    let s = '';
    for (let i = 0; s.length < len; i++) s += createHash('sha256').update(`pad-${i}`).digest('base64url');
    return s.slice(0, len);
  };
  const gpt = obj('ModelDeployment', 'gpt-a', {
    ...(md('gpt-a').spec as object),
    pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2 },
  });
  const acme = tenant('acme', ['gpt-4o-mini'], { wallet: { balanceUsd: 1 } });
  const ci = obj('ApiKey', 'ci', { tenantRef: { name: 'acme' }, secretRef: { name: 'ci-key' } });
  const secrets: Secrets = [
    ['openai', { apiKey: 'sk-1' }],
    ['ci-key', { key: 'gk-ci-0123456789abcdef' }],
  ];
  const pad = (len: number) => tenant('pad', ['gpt-4o-mini', filler(len)]);
  const fits = (len: number) => plan(world([gpt, acme, ci, pad(len)], secrets)).tooLarge === undefined;
  // The largest pad that still fits: the published snapshot sits at the limit, so any growth
  // of acme's JSON does not fit.
  let lo = 0;
  let hi = 4_000_000;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  const before = plan(world([gpt, acme, ci, pad(lo)], secrets));
  const withSpec = (spec: object) => ({ ...acme, spec: { ...(acme.spec as object), ...spec } });

  it('a wallet top-up that does not fit keeps the tenant and its key served at the old version', () => {
    expect(before.tooLarge).toBeUndefined();
    expect(published(before, 'ApiKey', 'ci')).toBeDefined();
    const toppedUp = withSpec({ wallet: { balanceUsd: 1000000.123456 } });
    const p = plan(world([gpt, toppedUp, ci, pad(lo)], secrets, before));
    expect(p.tooLarge).toBeDefined();
    // Before, the top-up was applied like a revocation and, not fitting, took acme and ci dark.
    expect(published(p, 'Tenant', 'acme')?.spec).toEqual(acme.spec);
    expect(verdict(p, 'Tenant', 'acme')?.reason).toBe('SnapshotTooLarge');
    expect(published(p, 'ApiKey', 'ci')).toBeDefined();
    servable(p);
  });

  it('a top-up with models added waits at the old version too', () => {
    const looser = withSpec({ models: ['gpt-4o-mini', ...names('acme', 3)], wallet: { balanceUsd: 50 } });
    const p = plan(world([gpt, looser, ci, pad(lo)], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'Tenant', 'acme')?.spec).toEqual(acme.spec);
    expect(published(p, 'ApiKey', 'ci')).toBeDefined();
  });

  it('a raised price that does not fit takes the deployment out, rather than undercharge at the old price', () => {
    const dearer = {
      ...gpt,
      spec: { ...(gpt.spec as object), pricing: { inputPerMillionTokens: 1.5, outputPerMillionTokens: 2 } },
    };
    const p = plan(world([dearer, acme, ci, pad(lo)], secrets, before));
    expect(p.tooLarge).toBeDefined();
    // Before, the old price kept serving until the snapshot fit.
    expect(published(p, 'ModelDeployment', 'gpt-a')).toBeUndefined();
    expect(p.credentials['gpt-a']).toBeUndefined();
    expect(verdict(p, 'ModelDeployment', 'gpt-a')).toMatchObject({
      reason: 'SnapshotTooLarge',
      message: expect.stringContaining('neither its previous version nor this one is served') as unknown,
    });
    servable(p);
  });

  it('a lowered price that does not fit waits at the old one', () => {
    const cheaper = {
      ...gpt,
      spec: {
        ...(gpt.spec as object),
        pricing: { inputPerMillionTokens: 0.999999, outputPerMillionTokens: 2 },
      },
    };
    const p = plan(world([cheaper, acme, ci, pad(lo)], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'ModelDeployment', 'gpt-a')?.spec).toEqual(gpt.spec);
    expect(verdict(p, 'ModelDeployment', 'gpt-a')?.reason).toBe('SnapshotTooLarge');
  });

  it('a guardrail named with a new policy that does not fit takes the tenant out, and says why', () => {
    const pii = obj('GuardrailPolicy', 'pii', { pii: { action: 'block' } });
    const guarded = withSpec({ guardrails: { policyRef: { name: 'pii' } } });
    const p = plan(world([gpt, guarded, ci, pad(lo), pii], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'Tenant', 'acme')).toBeUndefined();
    expect(published(p, 'GuardrailPolicy', 'pii')).toBeUndefined();
    // Not that its previous version no longer compiles (as it said before 'withheld'): both are out.
    expect(verdict(p, 'Tenant', 'acme')?.message).toContain(
      'neither its previous version nor this one is served',
    );
    expect(verdict(p, 'GuardrailPolicy', 'pii')?.reason).toBe('SnapshotTooLarge');
    servable(p);
  });

  it('a lowered balance is applied, and takes the tenant out when it does not fit', () => {
    const lowered = withSpec({ wallet: { balanceUsd: 0.000001 } });
    const p = plan(world([gpt, lowered, ci, pad(lo)], secrets, before));
    expect(p.tooLarge).toBeDefined();
    expect(published(p, 'Tenant', 'acme')).toBeUndefined();
    expect(verdict(p, 'Tenant', 'acme')?.reason).toBe('SnapshotTooLarge');
    servable(p);
  });
});
