/**
 * The chart against a real kube-apiserver: its renderings are accepted by the server (dry run),
 * its Roles allow exactly what they claim (SubjectAccessReview), and a data plane holding only
 * the data-plane ServiceAccount's token loads the snapshot Secret, serves examples/ from it and
 * is refused every other Secret.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiextensionsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startFakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { fakeBaseUrls, startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { PUBLISHED_DATA_KEY, PUBLISHED_FORMAT } from '../../dataplane/src/config/published.ts';
import { CREDENTIALS_LABEL, plan } from '../../operator/src/plan/plan.ts';
import type { ObservedObject } from '../../operator/src/world.ts';
import { renderChart, type KubeObject } from '../harness/helm.ts';
import type { KubeInstance } from '../harness/kube.ts';
import { startPrivateKube } from '../harness/kube-private.ts';
import { until } from '../harness/until.ts';

const NS = 'gantry';
let kube: KubeInstance;
let kc: KubeConfig;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
const cleanups: (() => Promise<unknown>)[] = [];

const statusOf = (err: unknown) => (err as { code?: number }).code;

/** Creates the objects (namespaced ones in `namespace`, as `helm install -n` would); what the server refused. */
async function createAll(objs: KubeObject[], namespace: string, dryRun?: 'All'): Promise<string[]> {
  const refused: string[] = [];
  for (const obj of objs) {
    const placed =
      obj.kind === 'CustomResourceDefinition' ? obj : { ...obj, metadata: { ...obj.metadata, namespace } };
    try {
      await objects.create(placed as KubernetesObject, undefined, dryRun);
    } catch (err) {
      refused.push(`${obj.kind}/${obj.metadata.name}: ${(err as Error).message.slice(0, 300)}`);
    }
  }
  return refused;
}

beforeAll(async () => {
  kube = await startPrivateKube();
  kc = new KubeConfig();
  kc.loadFromFile(kube.kubeconfig);
  objects = KubernetesObjectApi.makeApiClient(kc);
  core = kc.makeApiClient(CoreV1Api);
  for (const name of [NS, 'gantry-dry'])
    await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  // The default install, for real: CRDs first, then the rest once they are established.
  const rendered = await renderChart({}, { namespace: NS });
  const crds = rendered.filter((o) => o.kind === 'CustomResourceDefinition');
  expect(await createAll(crds, NS)).toEqual([]);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of crds)
    await until(
      `${crd.metadata.name} established`,
      async () => {
        const c = await ext.readCustomResourceDefinition({ name: crd.metadata.name });
        return (
          c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') || undefined
        );
      },
      30_000,
    );
  expect(
    await createAll(
      rendered.filter((o) => o.kind !== 'CustomResourceDefinition'),
      NS,
    ),
  ).toEqual([]);
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await kube?.stop();
}, 120_000);

describe('the rendered chart on a real apiserver', () => {
  // ServiceMonitor and HTTPRoute need the Prometheus Operator's and Gateway API's CRDs.
  const WITHOUT_FOREIGN_CRDS = (o: KubeObject) => !['ServiceMonitor', 'HTTPRoute'].includes(o.kind);

  it.each([
    ['standalone', { mode: 'standalone' }],
    [
      'every feature on',
      {
        redis: { url: 'redis://redis:6379/0', existingSecret: 'gantry-redis' },
        autoscaling: { enabled: true, targetInflightRequestsPerPod: 50 },
        providerSecrets: ['gantry-provider-keys'],
        providerEnv: ['OPENAI_API_KEY'],
        ingress: {
          enabled: true,
          className: 'nginx',
          tls: [{ secretName: 'tls', hosts: ['gantry.example.com'] }],
        },
        networkPolicy: { enabled: true },
        adminKey: { existingSecret: 'gantry-admin' },
        fakeProvider: 'off',
      },
    ],
    [
      'journal persistence (StatefulSet, volume per pod)',
      {
        redis: { url: 'redis://redis:6379/0' },
        autoscaling: { enabled: true },
        journal: { persistence: { enabled: true, storageClassName: 'standard' } },
      },
    ],
  ])('accepts %s (server-side dry run)', async (_name, values) => {
    const rendered = await renderChart({ ...values, crds: { install: false } }, { namespace: 'gantry-dry' });
    expect(rendered.length).toBeGreaterThanOrEqual(4);
    expect(await createAll(rendered.filter(WITHOUT_FOREIGN_CRDS), 'gantry-dry', 'All')).toEqual([]);
  });
});

describe('RBAC of the default install', () => {
  const can = async (
    serviceAccount: string,
    attrs: { verb: string; resource: string; group?: string; name?: string; subresource?: string },
  ) => {
    const authz = kc.makeApiClient(AuthorizationV1Api);
    const review = await authz.createSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: `system:serviceaccount:${NS}:${serviceAccount}`,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
          resourceAttributes: { namespace: NS, group: '', ...attrs },
        },
      },
    });
    return review.status?.allowed === true;
  };

  it.each([
    ['get', 'secrets', 'gantry-snapshot', true],
    ['list', 'secrets', 'gantry-snapshot', true],
    ['watch', 'secrets', 'gantry-snapshot', true],
    ['get', 'secrets', 'gantry-provider-keys', false],
    ['list', 'secrets', undefined, false],
    ['update', 'secrets', 'gantry-snapshot', false],
    ['list', 'configmaps', undefined, false],
  ] as const)('data plane: %s %s %s → %s', async (verb, resource, name, allowed) => {
    expect(await can('gantry', { verb, resource, name })).toBe(allowed);
  });

  it.each([
    ['list', 'gantry.dev', 'apikeys', undefined, undefined, true],
    ['watch', 'gantry.dev', 'tenants', undefined, undefined, true],
    ['patch', 'gantry.dev', 'apikeys', 'status', undefined, true],
    ['patch', 'gantry.dev', 'apikeys', undefined, undefined, false],
    ['delete', 'gantry.dev', 'tenants', undefined, undefined, false],
    ['create', '', 'secrets', undefined, undefined, true],
    ['update', '', 'secrets', undefined, 'team-a-app-key', true],
    ['delete', '', 'secrets', undefined, 'team-a-app-key', false],
    ['create', 'coordination.k8s.io', 'leases', undefined, undefined, true],
    ['update', 'coordination.k8s.io', 'leases', undefined, 'gantry-operator', true],
    ['update', 'coordination.k8s.io', 'leases', undefined, 'someone-else', false],
    ['list', '', 'pods', undefined, undefined, false],
  ] as const)('operator: %s %s/%s %s %s → %s', async (verb, group, resource, subresource, name, allowed) => {
    expect(await can('gantry-operator', { verb, group, resource, subresource, name })).toBe(allowed);
  });
});

describe('a data plane with only its ServiceAccount token', () => {
  let pod: Gateway;
  let dataPlaneKubeconfig: string;
  const KEY = 'sk-gantry-chart-e2e';

  beforeAll(async () => {
    const token = await core.createNamespacedServiceAccountToken({
      name: 'gantry',
      namespace: NS,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { audiences: [], expirationSeconds: 3600 },
      },
    });
    const cluster = kc.getCurrentCluster()!;
    const dir = await mkdtemp(join(tmpdir(), 'gantry-sa-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    dataPlaneKubeconfig = join(dir, 'kubeconfig');
    const ca = cluster.caData ?? readFileSync(cluster.caFile!).toString('base64');
    await writeFile(
      dataPlaneKubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'kas', cluster: { server: cluster.server, 'certificate-authority-data': ca } }],
        users: [{ name: 'dataplane', user: { token: token.status?.token } }],
        contexts: [{ name: 'dataplane', context: { cluster: 'kas', user: 'dataplane', namespace: NS } }],
        'current-context': 'dataplane',
      }),
    );

    const fake = await startFakeProvider({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => fake.close());
    // The gateway's snapshot watch loads the kubeconfig KUBECONFIG names: the token's.
    process.env.KUBECONFIG = dataPlaneKubeconfig;
    pod = await startGateway({
      snapshotSecret: { namespace: NS, name: 'gantry-snapshot' },
      configFile: '',
      fakeBaseUrl: fakeBaseUrls(fake.url),
    });
    cleanups.push(() => pod.close());

    // Publish examples/ as the operator's leader would, with its deployments on the fake provider.
    const dir2 = fileURLToPath(new URL('../../examples/', import.meta.url));
    const docs = readdirSync(dir2)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) =>
        parseAllDocuments(readFileSync(join(dir2, f), 'utf8')).map((d) => d.toJS() as ObservedObject | null),
      )
      .filter((d): d is ObservedObject => d !== null);
    const observed = docs.map((d, i) => {
      const spec = { ...(d.spec as Record<string, unknown>) };
      if (d.kind === 'ModelDeployment')
        spec.baseUrl = spec.provider === 'openai' ? `${fake.url}/v1` : fake.url;
      return {
        kind: d.kind,
        metadata: { name: d.metadata.name, namespace: NS, uid: `uid-${i}`, generation: 1 },
        spec,
      };
    });
    const secrets = new Map<string, Record<string, string>>([
      ['gantry-provider-keys', { openai: 'sk-openai', anthropic: 'sk-anthropic' }],
      ['team-a-app-key', { key: KEY }],
    ]);
    const p = plan({
      namespace: NS,
      objects: observed,
      secrets,
      secretLabels: new Map([['gantry-provider-keys', { [CREDENTIALS_LABEL]: 'provider' }]]),
      snapshotSecret: 'gantry-snapshot',
      // As the operator would have generated it for the ApiKey (no label needed).
      generatedKeys: new Map([['team-a-app-key', observed.find((o) => o.kind === 'ApiKey')!.metadata.uid]]),
    });
    expect(p.verdicts.filter((v) => !v.ready)).toEqual([]);
    const published = {
      format: PUBLISHED_FORMAT,
      version: 1,
      hash: p.hash,
      manifests: p.manifests,
      credentials: p.credentials,
    };
    await core.createNamespacedSecret({
      namespace: NS,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'gantry-snapshot' },
        data: { [PUBLISHED_DATA_KEY]: Buffer.from(JSON.stringify(published)).toString('base64') },
      },
    });
  }, 120_000);

  it('loads the snapshot Secret and serves the examples from it', async () => {
    await until(
      'snapshot version 1',
      async () => (pod.config.current().version === 1 ? true : undefined),
      30_000,
    );
    const ready = await fetch(`${pod.adminUrl}/readyz`);
    expect(ready.status).toBe(200);
    const openai = new OpenAI({ baseURL: `${pod.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const { data, response } = await openai.chat.completions
      .create({ model: 'chat', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toMatch(/hello/i);
    expect(response.headers.get('x-gantry-provider')).toBe('chat-openai');
  });

  it('is refused every other Secret with that token', async () => {
    const restricted = new KubeConfig();
    restricted.loadFromFile(dataPlaneKubeconfig);
    const api = restricted.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: NS,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'gantry-provider-keys' },
        stringData: { openai: 'x' },
      },
    });
    await expect(api.readNamespacedSecret({ name: 'gantry-provider-keys', namespace: NS })).rejects.toSatisfy(
      (err: unknown) => statusOf(err) === 403,
    );
    await expect(api.listNamespacedSecret({ namespace: NS })).rejects.toSatisfy(
      (err: unknown) => statusOf(err) === 403,
    );
    const own = await api.readNamespacedSecret({ name: 'gantry-snapshot', namespace: NS });
    expect(own.data?.[PUBLISHED_DATA_KEY]).toBeDefined();
  });
});
