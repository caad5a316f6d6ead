/**
 * examples/ as a new user applies it: every manifest validates against the CRD schemas, has
 * no namespace (kubectl -n picks it), and the set reconciles: fed to the operator's pure plan
 * with the provider Secret the comments describe (labelled as credentials), every object turns
 * Ready, the ApiKey after its key has been generated, and `chat` has two deployments behind
 * failover.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { compileValidators, formatAjvErrors, type KindName } from '../../crds/src/index.ts';
import { CREDENTIALS_LABEL, plan } from '../../operator/src/plan/plan.ts';
import type { ObservedObject, World } from '../../operator/src/world.ts';

const DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const files = readdirSync(DIR).filter((name) => /\.ya?ml$/.test(name));

interface Doc {
  apiVersion: string;
  kind: KindName;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown>;
}
const docs = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIR, file), 'utf8'))
    .map((doc) => doc.toJS() as Doc | null)
    .filter((doc): doc is Doc => doc !== null)
    .map((doc) => ({ file, doc })),
);

/** The Secret manifest the comments of modeldeployments.yaml show, uncommented. */
interface SecretDoc {
  metadata: { name: string; labels?: Record<string, string> };
  stringData: Record<string, string>;
}
function commentedSecret(): SecretDoc {
  const text = readFileSync(join(DIR, 'modeldeployments.yaml'), 'utf8');
  const lines = text.split('\n').filter((line) => line.startsWith('# '));
  const start = lines.findIndex((line) => line === '# apiVersion: v1');
  const end = lines.findIndex((line, i) => i > start && line === '# ---');
  return parse(
    lines
      .slice(start, end)
      .map((line) => line.slice(2))
      .join('\n'),
  ) as SecretDoc;
}

const observed = (doc: Doc, i: number): ObservedObject => ({
  kind: doc.kind,
  metadata: { name: doc.metadata.name, namespace: 'gantry', uid: `uid-${i}`, generation: 1 },
  spec: doc.spec,
});

describe('examples/', () => {
  it('has a tenant, an ApiKey and two ModelDeployments', () => {
    expect(docs.map(({ doc }) => doc.kind).sort()).toEqual([
      'ApiKey',
      'ModelDeployment',
      'ModelDeployment',
      'Tenant',
    ]);
  });

  it.each(docs.map(({ file, doc }) => [`${file}: ${doc.kind} ${doc.metadata.name}`, doc] as const))(
    '%s validates against its CRD schema and has no namespace',
    (_name, doc) => {
      const validate = compileValidators()[doc.kind];
      expect(validate, `unknown kind ${doc.kind}`).toBeDefined();
      expect(validate(structuredClone(doc)) ? [] : formatAjvErrors(validate.errors)).toEqual([]);
      expect(doc.metadata.namespace).toBeUndefined();
    },
  );

  it('puts one model behind failover: priorities 1 and 2, keys from the commented Secret', () => {
    const deployments = docs.filter(({ doc }) => doc.kind === 'ModelDeployment').map(({ doc }) => doc.spec);
    expect(new Set(deployments.map((d) => d.model)).size).toBe(1);
    expect(deployments.map((d) => d.priority).sort()).toEqual([1, 2]);
    const secret = commentedSecret();
    // Without its opt-in label the operator would not use it (SecretNotLabelled).
    expect(secret.metadata.labels).toEqual({ [CREDENTIALS_LABEL]: 'provider' });
    for (const d of deployments) {
      const ref = d.credentialsSecretRef as { name: string; key: string };
      expect(ref.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData)).toContain(ref.key);
    }
  });

  it('reconciles: the key is generated first, then every object is Ready and chat has two deployments', () => {
    const secret = commentedSecret();
    const objects = docs.map(({ doc }, i) => observed(doc, i));
    const secrets = new Map<string, Record<string, string>>([[secret.metadata.name, secret.stringData]]);
    const world: World = {
      namespace: 'gantry',
      objects,
      secrets,
      secretLabels: new Map([[secret.metadata.name, secret.metadata.labels ?? {}]]),
      snapshotSecret: 'gantry-snapshot',
      generatedKeys: new Map(),
    };

    const first = plan(world);
    expect(first.generate.map((g) => [g.apiKey.name, g.secretName, g.dataKey])).toEqual([
      ['team-a-app', 'team-a-app-key', 'key'],
    ]);
    expect(first.verdicts.filter((v) => !v.ready).map((v) => `${v.kind}/${v.name}: ${v.reason}`)).toEqual([
      'ApiKey/team-a-app: KeyPending',
    ]);

    secrets.set('team-a-app-key', { key: 'sk-gantry-generated-example-0123456789' });
    // Generated, so owned by its ApiKey: that Secret needs no label (one a user made would).
    const owner = objects.find((o) => o.kind === 'ApiKey')!.metadata.uid;
    const second = plan({ ...world, secrets, generatedKeys: new Map([['team-a-app-key', owner]]) });
    expect(second.generate).toEqual([]);
    expect(second.verdicts.filter((v) => !v.ready)).toEqual([]);
    expect(second.verdicts).toHaveLength(docs.length);
    expect(
      second.manifests
        .filter((m) => m.kind === 'ModelDeployment')
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual(['chat-anthropic', 'chat-openai']);
    expect(Object.keys(second.credentials).sort()).toEqual(['chat-anthropic', 'chat-openai']);
  });
});
