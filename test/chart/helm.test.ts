/**
 * The chart through real helm (built by scripts/ensure-helm.sh): `helm lint --strict` and
 * `helm template` for the defaults, operator and standalone mode and every optional feature,
 * with assertions on the rendered objects. The operator e2e applies the same renderings to a
 * real kube-apiserver with --dry-run=server (test/harness/helm.ts renderChart).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KIND_INFO } from '../../crds/src/render.ts';
import { helmBinary, lintChart, renderChart, renderNotes, type KubeObject } from '../harness/helm.ts';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  args?: string[];
  command?: string[];
  env?: EnvVar[];
  envFrom?: { secretRef?: { name: string } }[];
  securityContext?: Record<string, unknown>;
  readinessProbe?: { httpGet?: { path: string; port?: string | number } };
  livenessProbe?: { httpGet?: { path: string; port?: string | number } };
  ports?: { name: string; containerPort: number; protocol: string }[];
  lifecycle?: unknown;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  serviceAccountName: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: { name: string }[];
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

const find = (objs: KubeObject[], kind: string, name: string) => {
  const obj = objs.find((o) => o.kind === kind && o.metadata.name === name);
  if (!obj)
    throw new Error(`no ${kind} ${name} in: ${objs.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return obj;
};
const podSpec = (deployment: KubeObject) =>
  (deployment.spec as { template: { spec: PodSpec } }).template.spec;
const container = (deployment: KubeObject) => podSpec(deployment).containers[0]!;
const env = (c: Container, name: string) => c.env?.find((e) => e.name === name);
const rules = (role: KubeObject) => role.rules as Rule[];
const kinds = (objs: KubeObject[]) => objs.map((o) => o.kind).sort();
const allContainers = (objs: KubeObject[]) =>
  objs.filter((o) => o.kind === 'Deployment').flatMap((d) => podSpec(d).containers);

const PLURALS = Object.values(KIND_INFO).map((info) => info.plural);

const FEATURES = {
  redis: {
    url: 'redis://redis-master.redis.svc:6379/0',
    existingSecret: 'gantry-redis',
    passwordKey: 'password',
  },
  autoscaling: { enabled: true, targetInflightRequestsPerPod: 50 },
  providerSecrets: ['gantry-provider-keys'],
  providerEnv: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'],
  ingress: {
    enabled: true,
    className: 'nginx',
    tls: [{ secretName: 'gantry-tls', hosts: ['gantry.example.com'] }],
  },
  httpRoute: { enabled: true, hostnames: ['gantry.example.com'], timeouts: { request: '600s' } },
  networkPolicy: { enabled: true },
  serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
  adminKey: { existingSecret: 'gantry-admin' },
  compactionSecret: { existingSecret: 'gantry-compaction' },
  fakeProvider: 'off',
};

// Builds helm when `npm test` (scripts/ensure-helm.sh) has not: minutes, once per machine.
beforeAll(() => helmBinary(), 30 * 60_000);

describe('helm lint --strict', () => {
  it.each([
    ['defaults', {}],
    ['standalone', { mode: 'standalone' }],
    ['every feature on', FEATURES],
    ['journal persistence', { ...FEATURES, journal: { persistence: { enabled: true } } }],
  ])('passes with %s', async (_name, values) => {
    expect(await lintChart(values)).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });
});

describe('default install (operator mode)', () => {
  let objs: KubeObject[];
  beforeAll(async () => {
    objs = await renderChart({}, { namespace: 'team-ns' });
  });

  it('renders the CRDs, operator, data plane, Service, RBAC and the operator PDB, and nothing optional', () => {
    expect(kinds(objs)).toEqual(
      [
        ...PLURALS.map(() => 'CustomResourceDefinition'),
        'Deployment',
        'Deployment',
        'PodDisruptionBudget',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'Service',
        'ServiceAccount',
        'ServiceAccount',
      ].sort(),
    );
  });

  it('ships the five CRDs as templates that neither helm nor Argo CD deletes', () => {
    const crds = objs.filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(PLURALS.map((p) => `${p}.gantry.dev`).sort());
    for (const crd of crds)
      expect(crd.metadata.annotations).toEqual({
        'helm.sh/resource-policy': 'keep',
        'argocd.argoproj.io/sync-options': 'Prune=false,Delete=false',
      });
  });

  it('runs two operator replicas that elect a leader, named by the downward API', () => {
    const operator = find(objs, 'Deployment', 'gantry-operator');
    expect((operator.spec as { replicas: number }).replicas).toBe(2);
    const c = container(operator);
    expect(env(c, 'POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(env(c, 'POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.namespace');
    expect(c.command).toContain('operator/dist/operator.mjs');
    expect(c.args).toEqual([
      '--namespace',
      '$(POD_NAMESPACE)',
      '--identity',
      '$(POD_NAME)',
      '--snapshot-secret',
      'gantry-snapshot',
      '--lease-name',
      'gantry-operator',
      '--lease-duration',
      '15',
      '--health-port',
      '8081',
    ]);
    expect(c.ports).toEqual([{ name: 'health', containerPort: 8081, protocol: 'TCP' }]);
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(podSpec(operator).serviceAccountName).toBe('gantry-operator');
    expect(find(objs, 'PodDisruptionBudget', 'gantry-operator').spec).toMatchObject({ maxUnavailable: 1 });
  });

  it('passes operator.maxObjectBytes as --max-object-bytes, and nothing at 0 (the default)', async () => {
    const operator = find(
      await renderChart({ operator: { maxObjectBytes: 1_048_576 } }),
      'Deployment',
      'gantry-operator',
    );
    expect(container(operator).args?.slice(-2)).toEqual(['--max-object-bytes', '1048576']);
    expect(container(find(objs, 'Deployment', 'gantry-operator')).args).not.toContain('--max-object-bytes');
  });

  it('points the data plane at the snapshot Secret of the release namespace, with the fake provider on auto', () => {
    const dataplane = find(objs, 'Deployment', 'gantry');
    const c = container(dataplane);
    expect(c.command).toContain('dataplane/dist/gantry.mjs');
    expect(c.args).toEqual(['--snapshot-secret', 'team-ns/gantry-snapshot', '--fake-provider', 'auto']);
    expect(podSpec(dataplane).automountServiceAccountToken).toBe(true);
    expect(podSpec(dataplane).volumes?.map((v) => v.name)).toEqual(['tmp']);
    // The journal's default home is the pod's emptyDir (/tmp): no directory is set.
    expect(env(c, 'GANTRY_JOURNAL_DIR')).toBeUndefined();
    // No variable of the pod is offered to ModelDeployments' apiKeyEnv until listed.
    expect(env(c, 'GANTRY_PROVIDER_ENV')).toEqual({ name: 'GANTRY_PROVIDER_ENV', value: '' });
    expect(objs.some((o) => o.kind === 'ConfigMap')).toBe(false);
  });

  it('runs the image of this release: a changed operator is a new tag, never a cached old image', () => {
    // 0.1.0 is the operator before the credentials opt-in; with IfNotPresent a node that has it
    // cached would run it under chart 0.3.
    const root = join(import.meta.dirname, '../..');
    const appVersion = /^appVersion: "(.+)"$/m.exec(
      readFileSync(join(root, 'charts/gantry/Chart.yaml'), 'utf8'),
    )?.[1];
    expect(appVersion).toBe('0.2.0');
    for (const name of ['gantry', 'gantry-operator']) {
      const c = container(find(objs, 'Deployment', name));
      expect(c.image).toBe('gantry:0.2.0');
      expect(c.imagePullPolicy).toBe('IfNotPresent');
    }
    // The build instructions push the tag the chart pulls.
    for (const file of ['README.md', 'Dockerfile']) {
      const tags = [...readFileSync(join(root, file), 'utf8').matchAll(/gantry:(\d+\.\d+\.\d+)/g)].map(
        (m) => m[1],
      );
      expect(tags.length, file).toBeGreaterThan(0);
      expect(new Set(tags), file).toEqual(new Set([appVersion]));
    }
  });

  it('gives the data plane get/list/watch on the snapshot Secret and nothing else', () => {
    expect(rules(find(objs, 'Role', 'gantry'))).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['gantry-snapshot'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    const binding = find(objs, 'RoleBinding', 'gantry');
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: 'gantry' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'gantry', namespace: 'team-ns' }]);
  });

  it('gives the operator exactly its five kinds, their status, Secrets and its own Lease', () => {
    const r = rules(find(objs, 'Role', 'gantry-operator'));
    expect(r).toEqual([
      { apiGroups: ['gantry.dev'], resources: PLURALS.map(String), verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['gantry.dev'], resources: PLURALS.map((p) => `${p}/status`), verbs: ['patch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['gantry-operator'],
        verbs: ['get', 'update'],
      },
    ]);
    expect(r.flatMap((rule) => rule.verbs)).not.toContain('delete');
    expect(r.flatMap((rule) => rule.resources)).not.toContain('*');
  });

  it('runs both Deployments non-root on a read-only root filesystem with no capabilities', () => {
    for (const name of ['gantry', 'gantry-operator']) {
      const d = find(objs, 'Deployment', name);
      expect(podSpec(d).securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 1000,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container(d).securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(container(d).volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    }
  });

  it('drains on shutdown inside the grace period, readiness first and without a preStop hook', () => {
    const d = find(objs, 'Deployment', 'gantry');
    const c = container(d);
    const preStop = Number(env(c, 'GANTRY_PRE_STOP_MS')?.value);
    const drain = Number(env(c, 'GANTRY_DRAIN_TIMEOUT_MS')?.value);
    // Then journaled charges are replayed: the whole sequence ends before the kubelet's SIGKILL.
    const journalDrain = Number(env(c, 'GANTRY_JOURNAL_DRAIN_MS')?.value);
    expect(preStop).toBeGreaterThan(0);
    expect(journalDrain).toBe(10_000);
    expect(podSpec(d).terminationGracePeriodSeconds! * 1000).toBeGreaterThanOrEqual(
      preStop + drain + journalDrain + 5_000,
    );
    expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(c.lifecycle).toBeUndefined();
  });

  it('prints a loud warning about the fake provider', async () => {
    const notes = await renderNotes();
    expect(notes).toMatch(/WARNING: fakeProvider is "auto"/);
    expect(notes).toContain('BUILT-IN FAKE PROVIDER');
    expect(await renderNotes({ fakeProvider: 'off' })).not.toMatch(/WARNING/);
  });

  it('says where charges from a Redis outage wait, and what the default can lose', async () => {
    const redis = { url: 'redis://r:6379' };
    expect(await renderNotes({ redis })).toMatch(
      /journal on each pod's emptyDir[\s\S]*10 s into its shutdown/,
    );
    const persisted = await renderNotes({ redis, journal: { persistence: { enabled: true } } });
    expect(persisted).not.toMatch(/emptyDir/);
    // Without Redis there is no journal to speak of.
    expect(await renderNotes()).not.toMatch(/emptyDir/);
  });

  it('warns that whenDeleted: Delete keeps the journal volumes on Kubernetes before 1.27', async () => {
    const values = {
      redis: { url: 'redis://r:6379' },
      journal: { persistence: { enabled: true, whenDeleted: 'Delete' } },
    };
    expect(await renderNotes(values, { kubeVersion: '1.26.9' })).toMatch(
      /whenDeleted is Delete, but Kubernetes v1\.26\.9 is older than 1\.27/,
    );
    expect(await renderNotes(values, { kubeVersion: '1.27.0' })).not.toMatch(/older than 1\.27/);
    const retained = { ...values, journal: { persistence: { enabled: true, whenDeleted: 'Retain' } } };
    expect(await renderNotes(retained, { kubeVersion: '1.26.9' })).not.toMatch(/older than 1\.27/);
  });
});

describe('standalone mode', () => {
  let objs: KubeObject[];
  beforeAll(async () => {
    objs = await renderChart({ mode: 'standalone' });
  });

  it('runs the data plane on the ConfigMap of manifests, with no operator, no RBAC and no API token', () => {
    expect(kinds(objs)).toEqual(
      [
        ...PLURALS.map(() => 'CustomResourceDefinition'),
        'ConfigMap',
        'Deployment',
        'Service',
        'ServiceAccount',
      ].sort(),
    );
    const d = find(objs, 'Deployment', 'gantry');
    expect(container(d).args).toEqual(['--config', '/etc/gantry/gantry.yaml', '--fake-provider', 'auto']);
    expect(podSpec(d).automountServiceAccountToken).toBe(false);
    // The file is the pod's own config, written by whoever installs the chart: no list.
    expect(env(container(d), 'GANTRY_PROVIDER_ENV')).toBeUndefined();
    expect(find(objs, 'ServiceAccount', 'gantry').automountServiceAccountToken).toBe(false);
    expect(container(d).volumeMounts).toContainEqual({
      name: 'config',
      mountPath: '/etc/gantry',
      readOnly: true,
    });
    expect(
      String((find(objs, 'ConfigMap', 'gantry').data as Record<string, string>)['gantry.yaml']),
    ).toContain('kind: ModelDeployment');
  });
});

describe('every optional feature on', () => {
  let objs: KubeObject[];
  beforeAll(async () => {
    objs = await renderChart(FEATURES);
  });

  it('adds the HPA, the data plane PDB, Ingress, HTTPRoute, NetworkPolicies and ServiceMonitor', () => {
    for (const [kind, name] of [
      ['HorizontalPodAutoscaler', 'gantry'],
      ['PodDisruptionBudget', 'gantry'],
      ['Ingress', 'gantry'],
      ['HTTPRoute', 'gantry'],
      ['NetworkPolicy', 'gantry'],
      ['NetworkPolicy', 'gantry-operator'],
      ['ServiceMonitor', 'gantry'],
    ] as const)
      expect(find(objs, kind, name).kind).toBe(kind);
    expect((find(objs, 'Deployment', 'gantry').spec as { replicas?: number }).replicas).toBeUndefined();
    const metrics = (find(objs, 'HorizontalPodAutoscaler', 'gantry').spec as { metrics: { type: string }[] })
      .metrics;
    expect(metrics.map((m) => m.type)).toEqual(['Resource', 'Pods']);
  });

  it('routes the Ingress and the HTTPRoute to the API port only', () => {
    const ingress = find(objs, 'Ingress', 'gantry').spec as {
      ingressClassName: string;
      rules: { http: { paths: { backend: { service: { port: { name: string } } } }[] } }[];
    };
    expect(ingress.ingressClassName).toBe('nginx');
    expect(ingress.rules[0]!.http.paths[0]!.backend.service.port).toEqual({ name: 'http' });
    const route = find(objs, 'HTTPRoute', 'gantry').spec as {
      rules: { backendRefs: { name: string; port: number }[]; timeouts: unknown }[];
    };
    expect(route.rules[0]!.backendRefs).toEqual([{ name: 'gantry', port: 80 }]);
    expect(route.rules[0]!.timeouts).toEqual({ request: '600s' });
  });

  it('opens the API port to the cluster, the admin port to monitoring, and the operator to nothing', () => {
    const policy = find(objs, 'NetworkPolicy', 'gantry').spec as {
      ingress: { from: { namespaceSelector: unknown }[]; ports: { port: string }[] }[];
    };
    expect(policy.ingress).toEqual([
      { from: [{ namespaceSelector: {} }], ports: [{ port: 'http', protocol: 'TCP' }] },
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ port: 'admin', protocol: 'TCP' }],
      },
    ]);
    const operator = find(objs, 'NetworkPolicy', 'gantry-operator').spec as Record<string, unknown>;
    expect(operator.policyTypes).toEqual(['Ingress']);
    expect(operator.ingress).toBeUndefined();
  });

  it('takes the Redis password from its Secret, never as a value', () => {
    for (const c of allContainers(objs)) {
      expect(env(c, 'GANTRY_REDIS_URL')?.value).toBe(FEATURES.redis.url);
      expect(env(c, 'GANTRY_REDIS_PASSWORD')).toEqual({
        name: 'GANTRY_REDIS_PASSWORD',
        valueFrom: { secretKeyRef: { name: 'gantry-redis', key: 'password' } },
      });
      const plain = (c.env ?? []).filter(
        (e) => /PASSWORD|SECRET|_KEY$/.test(e.name) && e.value !== undefined,
      );
      expect(plain).toEqual([]);
    }
  });

  it('wires provider Secrets and the admin key into the data plane', () => {
    const c = container(find(objs, 'Deployment', 'gantry'));
    expect(c.envFrom).toEqual([{ secretRef: { name: 'gantry-provider-keys' } }]);
    // Published ModelDeployments may name these alone; the operator is told the same list.
    for (const name of ['gantry', 'gantry-operator'])
      expect(env(container(find(objs, 'Deployment', name)), 'GANTRY_PROVIDER_ENV')?.value).toBe(
        'OPENAI_API_KEY,ANTHROPIC_API_KEY',
      );
    expect(env(c, 'GANTRY_ADMIN_KEY')?.valueFrom?.secretKeyRef).toEqual({
      name: 'gantry-admin',
      key: 'admin-key',
    });
    expect(env(c, 'GANTRY_COMPACTION_SECRET')?.valueFrom?.secretKeyRef).toEqual({
      name: 'gantry-compaction',
      key: 'compaction-secret',
    });
    expect(c.args).toContain('off');
  });
});

describe('journal persistence', () => {
  let objs: KubeObject[];
  beforeAll(async () => {
    objs = await renderChart({
      ...FEATURES,
      journal: { persistence: { enabled: true, storageClassName: 'fast-ssd', size: '2Gi' } },
    });
  });

  interface StatefulSetSpec {
    replicas?: number;
    serviceName: string;
    podManagementPolicy: string;
    persistentVolumeClaimRetentionPolicy: { whenScaled: string; whenDeleted: string };
    selector: { matchLabels: Record<string, string> };
    template: { spec: PodSpec };
    volumeClaimTemplates: {
      metadata: { name: string };
      spec: {
        accessModes: string[];
        storageClassName?: string;
        resources: { requests: { storage: string } };
      };
    }[];
  }

  it('runs the data plane as a StatefulSet (no Deployment) with a journal volume per pod', () => {
    expect(objs.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name)).toEqual([
      'gantry-operator',
    ]);
    const set = find(objs, 'StatefulSet', 'gantry').spec as StatefulSetSpec;
    expect(set.volumeClaimTemplates).toEqual([
      {
        metadata: { name: 'journal', labels: expect.any(Object) },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'fast-ssd',
          resources: { requests: { storage: '2Gi' } },
        },
      },
    ]);
    const c = set.template.spec.containers[0]!;
    const dir = env(c, 'GANTRY_JOURNAL_DIR')?.value;
    expect(dir).toBe('/var/lib/gantry/journal');
    expect(c.volumeMounts).toContainEqual({ name: 'journal', mountPath: dir });
    // A scaled-away pod's journal is kept for when its ordinal returns.
    expect(set.persistentVolumeClaimRetentionPolicy).toEqual({ whenScaled: 'Retain', whenDeleted: 'Retain' });
    expect(set.podManagementPolicy).toBe('Parallel');
    expect(set.replicas).toBeUndefined(); // the HPA's
  });

  it('is governed by a headless Service, scaled by the HPA and covered by the PDB', () => {
    const set = find(objs, 'StatefulSet', 'gantry').spec as StatefulSetSpec;
    const headless = find(objs, 'Service', set.serviceName).spec as {
      clusterIP: string;
      selector: Record<string, string>;
    };
    expect(headless.clusterIP).toBe('None');
    expect(headless.selector).toEqual(set.selector.matchLabels);
    // Clients still use the ClusterIP Service.
    expect((find(objs, 'Service', 'gantry').spec as { selector: unknown }).selector).toEqual(
      set.selector.matchLabels,
    );
    expect(
      (find(objs, 'HorizontalPodAutoscaler', 'gantry').spec as { scaleTargetRef: unknown }).scaleTargetRef,
    ).toEqual({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      name: 'gantry',
    });
    expect(
      (find(objs, 'PodDisruptionBudget', 'gantry').spec as { selector: { matchLabels: unknown } }).selector
        .matchLabels,
    ).toEqual(set.selector.matchLabels);
  });

  it('leaves storageClassName to the cluster default when empty', async () => {
    const set = find(
      await renderChart({ redis: FEATURES.redis, journal: { persistence: { enabled: true } } }),
      'StatefulSet',
      'gantry',
    ).spec as StatefulSetSpec;
    expect(set.replicas).toBe(1);
    expect(set.volumeClaimTemplates[0]!.spec.storageClassName).toBeUndefined();
    expect(set.volumeClaimTemplates[0]!.spec.resources.requests.storage).toBe('1Gi');
  });
});

describe('values', () => {
  it('lets the security contexts be changed (helm merges maps; null removes a key)', async () => {
    const objs = await renderChart({
      podSecurityContext: { runAsUser: 2000, fsGroup: null },
      securityContext: { readOnlyRootFilesystem: false },
    });
    for (const name of ['gantry', 'gantry-operator']) {
      const d = find(objs, 'Deployment', name);
      expect(podSpec(d).securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 2000,
        runAsGroup: 1000,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container(d).securityContext).toMatchObject({ readOnlyRootFilesystem: false });
    }
  });

  it('leaves the CRDs out when crds.install is false', async () => {
    const objs = await renderChart({ crds: { install: false } });
    expect(objs.some((o) => o.kind === 'CustomResourceDefinition')).toBe(false);
  });

  it.each([
    ['an unknown value', { replicas: 3 }, /replicas/],
    ['an unknown mode', { mode: 'sidecar' }, /mode/],
    ['fakeProvider "on"', { fakeProvider: 'on' }, /fakeProvider/],
    [
      'credentials in redis.url',
      { redis: { url: 'redis://:hunter2@redis:6379' } },
      /must not carry credentials/,
    ],
    ['two replicas without Redis', { replicaCount: 2 }, /needs shared state/],
    [
      'providerSecrets in operator mode without providerEnv',
      { providerSecrets: ['gantry-provider-keys'] },
      /list in providerEnv the variables/,
    ],
    [
      'a GANTRY_* name in providerEnv',
      { providerEnv: ['OPENAI_API_KEY', 'GANTRY_REDIS_PASSWORD'] },
      /providerEnv: GANTRY_REDIS_PASSWORD is one of the gateway's own settings/,
    ],
    ['a providerEnv entry that is no variable name', { providerEnv: ['OPENAI-KEY'] }, /providerEnv/],
    [
      'a drain longer than the grace period',
      { shutdown: { preStopSeconds: 5, drainSeconds: 61, journalDrainSeconds: 0 } },
      /terminationGracePeriodSeconds/,
    ],
    [
      'a journal drain that does not fit the grace period',
      { shutdown: { preStopSeconds: 5, drainSeconds: 50, journalDrainSeconds: 11 } },
      /shutdown.journalDrainSeconds must leave at least 5 s of terminationGracePeriodSeconds/,
    ],
    ['an operator.maxObjectBytes under 1024', { operator: { maxObjectBytes: 512 } }, /maxObjectBytes/],
    [
      'journal persistence without Redis',
      { journal: { persistence: { enabled: true } } },
      /journal.persistence needs redis.url/,
    ],
    [
      'a journal volume size that is no quantity',
      { redis: { url: 'redis://r:6379' }, journal: { persistence: { enabled: true, size: 'big' } } },
      /size/,
    ],
  ])('refuses %s', async (_name, values, message) => {
    await expect(renderChart(values)).rejects.toThrow(message);
  });
});
