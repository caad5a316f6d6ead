import { describe, expect, it } from 'vitest';
import {
  compilePublished,
  packSnapshot,
  PUBLISHED_DATA_KEY,
  PUBLISHED_FORMAT,
  PUBLISHED_GZIP_KEY,
  publishedText,
} from './published.ts';
import { providerEnvOnly } from './provider-env.ts';
import { POD_ENV, unsetEnvSnapshot } from './unset-env-fixture.ts';

const opts = { env: {}, source: 'secret gantry/snapshot', fakeBaseUrl: () => 'http://127.0.0.1:1' };
const doc = (fields: object) =>
  JSON.stringify({ format: PUBLISHED_FORMAT, version: 3, manifests: [], ...fields });
const errorsOf = (text: string) => {
  const r = compilePublished(text, opts);
  return r.ok ? [] : r.errors;
};

describe('compilePublished', () => {
  // A throw here ran inside the Secret informer's callback: at a pod's first list it ended
  // the watch for good (the pod never loaded a later, good snapshot).
  it('rejects JSON that is not an object instead of throwing', () => {
    expect(errorsOf('null')).toEqual(['secret gantry/snapshot: the snapshot must be a JSON object']);
    expect(errorsOf('[1]')).toEqual(['secret gantry/snapshot: the snapshot must be a JSON object']);
  });

  it('rejects a manifest that is not an object, naming its index', () => {
    expect(errorsOf(doc({ manifests: [null, 5] }))).toEqual([
      'secret gantry/snapshot: manifests[0] must be an object',
      'secret gantry/snapshot: manifests[1] must be an object',
    ]);
  });

  it('rejects credentials that are not a map of strings', () => {
    expect(errorsOf(doc({ credentials: 'sk-x' }))).toEqual([
      'secret gantry/snapshot: credentials must map deployment names to strings',
    ]);
    expect(errorsOf(doc({ credentials: { 'gpt-a': 5 } }))).toEqual([
      'secret gantry/snapshot: credentials must map deployment names to strings',
    ]);
  });

  it('still loads a well-formed empty snapshot', () => {
    const r = compilePublished(doc({ credentials: {} }), opts);
    expect(r.ok && r.snapshot.version).toBe(3);
  });
});

describe('a deployment whose apiKeyEnv this pod does not have (fake provider off)', () => {
  const env = providerEnvOnly(POD_ENV);

  it('is left out with a warning naming it; the rest of the snapshot loads', () => {
    const r = compilePublished(unsetEnvSnapshot(7), { env, source: 'secret gantry/snapshot' });
    if (!r.ok) throw new Error(r.errors.join('; '));
    expect(r.snapshot.version).toBe(7);
    expect([...r.snapshot.models.keys()]).toEqual(['gpt-4o-mini']);
    // The fallback to the model no one serves here is skipped, not an error.
    expect(r.snapshot.models.get('gpt-4o-mini')?.fallbacks).toEqual([]);
    expect(r.snapshot.keys.size).toBe(1);
    // Recorded, so requests for claude-3 answer 503 (not 404) and /readyz shows it.
    expect(r.snapshot.leftOut).toEqual([
      { deployment: 'claude', model: 'claude-3', env: 'ANTHROPIC_API_KEY' },
    ]);
    expect(r.warnings).toEqual([
      'ModelDeployment/claude: spec.apiKeyEnv: environment variable ANTHROPIC_API_KEY is not set in this pod; deployment claude is left out, the rest loads',
      'ModelDeployment/gpt: spec.fallbacks: claude-3 is not served in this pod (its deployments are left out); skipped',
      'Tenant/acme: spec.models: no ModelDeployment serves claude-3 yet',
    ]);
  });

  it('a fallback to a model nothing declares is still an error', () => {
    const doc = JSON.parse(unsetEnvSnapshot(7)) as { manifests: { spec: { fallbacks?: string[] } }[] };
    doc.manifests[0]!.spec.fallbacks = ['nowhere'];
    const r = compilePublished(JSON.stringify(doc), { env, source: 's' });
    expect(r.ok ? [] : r.errors).toEqual([
      'ModelDeployment/gpt: spec.fallbacks: no ModelDeployment serves nowhere',
    ]);
  });

  it("a left-out deployment's fallbacks stay its model's, as on a pod that has the variable", () => {
    const md = (name: string, model: string, apiKeyEnv: string, fallbacks?: string[]) => ({
      apiVersion: 'gantry.dev/v1alpha1',
      kind: 'ModelDeployment',
      metadata: { name, namespace: 'gantry' },
      spec: {
        model,
        upstreamModel: model,
        provider: 'openai',
        baseUrl: 'https://x.example/v1',
        apiKeyEnv,
        ...(fallbacks && { fallbacks }),
      },
    });
    // a and b serve m, only a (left out here) declares m's fallback to n.
    const text = doc({
      credentials: {},
      manifests: [
        md('a', 'm', 'ANTHROPIC_API_KEY', ['n']),
        md('b', 'm', 'OPENAI_API_KEY'),
        md('c', 'n', 'OPENAI_API_KEY'),
      ],
    });
    const without = compilePublished(text, { env, source: 's' });
    const withVar = compilePublished(text, {
      env: providerEnvOnly({ ...POD_ENV, ANTHROPIC_API_KEY: 'sk-ant' }),
      source: 's',
    });
    if (!without.ok || !withVar.ok) throw new Error('both load');
    expect(without.snapshot.models.get('m')?.deployments.map((d) => d.name)).toEqual(['b']);
    expect(without.snapshot.models.get('m')?.fallbacks).toEqual(['n']);
    expect(withVar.snapshot.models.get('m')?.fallbacks).toEqual(['n']);
  });

  it('with the variable set, both are served', () => {
    const r = compilePublished(unsetEnvSnapshot(7), {
      env: providerEnvOnly({ ...POD_ENV, ANTHROPIC_API_KEY: 'sk-ant' }),
      source: 's',
    });
    expect(r.ok && [...r.snapshot.models.keys()].sort()).toEqual(['claude-3', 'gpt-4o-mini']);
    expect(r.ok && r.warnings).toEqual([]);
  });
});

describe('publishedText', () => {
  const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');
  const text = JSON.stringify({ format: 'gantry.dev/snapshot/v1', version: 3, manifests: [] });

  it('reads the gzipped form, and prefers it to the plain one', () => {
    expect(publishedText({ [PUBLISHED_GZIP_KEY]: b64(packSnapshot(text)) })).toEqual({ ok: true, text });
    expect(
      publishedText({ [PUBLISHED_GZIP_KEY]: b64(packSnapshot(text)), [PUBLISHED_DATA_KEY]: b64('{}') }),
    ).toEqual({ ok: true, text });
  });

  it("reads an older operator's plain form", () => {
    expect(publishedText({ [PUBLISHED_DATA_KEY]: b64(text) })).toEqual({ ok: true, text });
  });

  it('rejects a gzip that is not one, or a Secret with neither key, with a reason', () => {
    expect(publishedText({ [PUBLISHED_GZIP_KEY]: b64(text) })).toMatchObject({
      ok: false,
      error: expect.stringContaining('snapshot.json.gz is not gzip') as unknown,
    });
    expect(publishedText({ other: b64(text) })).toEqual({
      ok: false,
      error: 'no snapshot.json.gz or snapshot.json in the Secret',
    });
    expect(publishedText(undefined)).toMatchObject({ ok: false });
  });

  it('packs deterministically, so equal snapshots are equal bytes', () => {
    expect(packSnapshot(text).equals(packSnapshot(text))).toBe(true);
  });
});
