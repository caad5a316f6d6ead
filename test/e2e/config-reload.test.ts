/**
 * The standalone config file under change: a watched edit swaps in a new snapshot, an invalid
 * edit is rejected with errors naming file, document and field while the old snapshot keeps
 * serving, and a request in flight finishes on the snapshot it started with. Plus the
 * loader's error messages on their own, and a gateway refusing to start on a bad file.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../dataplane/src/config/load.ts';
import type { ReloadEvent } from '../../dataplane/src/config/store.ts';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { startGateway } from '../../dataplane/src/gateway.ts';
import {
  apiKey,
  deployment,
  fakeBase,
  manifest,
  sha256,
  startStack,
  tenant,
  type Stack,
} from '../harness/stack.ts';

const KEY = 'sk-reload';

let stack: Stack;
let fakeUrl: string;
const logLines: Record<string, unknown>[] = [];

/** The base config: model-a, the slow models used by the in-flight tests, tenant and key. */
function config(extra: string[] = [], opts: { without?: string[] } = {}): string {
  const models = ['model-a', 'model-slow', 'model-slow-stream'].filter((m) => !opts.without?.includes(m));
  return [
    tenant('acme'),
    ...models.map((m) => deployment({ name: m, model: m, baseUrl: fakeBase(fakeUrl) })),
    apiKey('acme-key', KEY, 'acme'),
    ...extra,
  ].join('');
}

beforeAll(async () => {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  stack = await startStack(
    ([url]) => {
      fakeUrl = url!;
      return config();
    },
    { watch: true, logger: { level: 'info', stream } },
  );
});
afterAll(() => stack.close());
beforeEach(() => stack.fakes[0]!.reset());

/** The next reload event, or a failure after a bounded wait (never a sleep to synchronise on). */
function nextReload(timeoutMs = 10_000): Promise<ReloadEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no config reload within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = stack.gateway.config.onReload((event) => {
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

/** Replace the file the way editors and ConfigMap updates do: write aside, then rename over. */
async function replaceConfig(text: string): Promise<ReloadEvent> {
  const reloaded = nextReload();
  const aside = join(dirname(stack.configFile), '.gantry.yaml.next');
  await writeFile(aside, text);
  await rename(aside, stack.configFile);
  return reloaded;
}

/** Poll a condition in a bounded loop. */
async function until(condition: () => boolean, what: string, tries = 500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const client = () => new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
const ask = (model: string, content = 'hello') =>
  client().chat.completions.create({ model, messages: [{ role: 'user', content }] });

async function status(
  model: string,
): Promise<{ status: number; body: { error?: { message: string; type: string } } }> {
  const res = await fetch(`${stack.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: (await res.json()) as { error?: { message: string; type: string } } };
}

async function readyz(): Promise<{ configVersion: number; models: number }> {
  return (await (await fetch(`${stack.gateway.adminUrl}/readyz`)).json()) as {
    configVersion: number;
    models: number;
  };
}

const models = async () => (await client().models.list()).data.map((m) => m.id).sort();

describe('a valid edit', () => {
  it('makes a new model servable after the reload event', async () => {
    const before = stack.gateway.config.current().version;
    expect((await status('model-new')).status).toBe(404);

    // An in-place write, as `echo >> gantry.yaml` would do.
    const reloaded = nextReload();
    await stack.writeConfig(
      config([deployment({ name: 'model-new', model: 'model-new', baseUrl: fakeBase(fakeUrl) })]),
    );
    const event = await reloaded;

    expect(event).toEqual({ ok: true, version: before + 1 });
    expect(stack.gateway.config.current().version).toBe(before + 1);
    const res = await ask('model-new', 'new model please');
    expect(res.choices[0]?.message.content).toBe(fakeAnswer('new model please'));
    expect(res.model).toBe('model-new');
    expect(await models()).toContain('model-new');
    expect((await readyz()).configVersion).toBe(before + 1);
    expect(logLines.some((l) => l.msg === 'config reloaded' && l.version === before + 1)).toBe(true);
  });

  it('a new key works, and a removed one stops working, after the reload', async () => {
    const NEW_KEY = 'sk-reload-new';
    const event = await replaceConfig(config([apiKey('new-key', NEW_KEY, 'acme')]));
    expect(event.ok).toBe(true);
    const fresh = new OpenAI({ baseURL: stack.baseURL, apiKey: NEW_KEY, maxRetries: 0 });
    expect((await fresh.models.list()).data.length).toBeGreaterThan(0);

    expect((await replaceConfig(config())).ok).toBe(true);
    const err = await fresh.models.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('an invalid edit is rejected and the previous snapshot keeps serving', () => {
  const rejectedCount = async () => {
    const text = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('gantry_config_reloads_total{result="rejected"}'));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  async function expectRejected(text: string, expected: RegExp[]): Promise<string[]> {
    const version = stack.gateway.config.current().version;
    const modelsBefore = await models();
    const rejectedBefore = await rejectedCount();

    const event = await replaceConfig(text);
    expect(event.ok).toBe(false);
    const errors = event.ok ? [] : event.errors;
    for (const pattern of expected)
      expect(
        errors.some((e) => pattern.test(e)),
        `${pattern} in ${errors.join(' | ')}`,
      ).toBe(true);

    // Nothing changed: same version, same models, and they still answer.
    expect(stack.gateway.config.current().version).toBe(version);
    expect((await readyz()).configVersion).toBe(version);
    expect(await models()).toEqual(modelsBefore);
    const res = await ask('model-a', 'still here?');
    expect(res.choices[0]?.message.content).toBe(fakeAnswer('still here?'));
    expect(await rejectedCount()).toBe(rejectedBefore + 1);
    // The reason is logged, with the same messages.
    const logged = logLines.filter(
      (l) => l.msg === 'config reload rejected; previous snapshot keeps serving',
    );
    expect(logged.at(-1)?.errors).toEqual(errors);
    expect(logged.at(-1)?.level).toBe(50);
    return errors;
  }

  it('a schema error names the file, the document and the field', async () => {
    const bad = manifest('ModelDeployment', 'broken', {
      model: 'model-broken',
      provider: 'not-a-provider',
      upstreamModel: 'x',
      weight: -1,
      baseUrl: fakeBase(fakeUrl),
      apiKeyEnv: 'FAKE_PROVIDER_KEY',
    });
    // tenant, 3 deployments, key, then the broken one: document 6.
    const errors = await expectRejected(config([bad]), [
      /gantry\.yaml document 6 \(ModelDeployment\/broken\): \/spec\/provider: must be one of/,
      /gantry\.yaml document 6 \(ModelDeployment\/broken\): \/spec\/weight: must be >= 0/,
    ]);
    expect(errors.every((e) => e.includes('document 6'))).toBe(true);
  });

  it('a cross-reference error (unknown tenantRef) names the file, the document and the field', async () => {
    const errors = await expectRejected(config([apiKey('orphan-key', 'sk-orphan', 'ghost-tenant')]), [
      /gantry\.yaml document 6 \(ApiKey\/orphan-key\): spec\.tenantRef: Tenant ghost-tenant not found/,
    ]);
    expect(errors).toHaveLength(1);
  });

  it('an unknown fallback model is rejected naming its document and field', async () => {
    const withFallback = deployment({
      name: 'model-fb',
      model: 'model-fb',
      baseUrl: fakeBase(fakeUrl),
      fallbacks: ['model-nowhere'],
    });
    await expectRejected(config([withFallback]), [
      /gantry\.yaml document 6 .*spec\.fallbacks.*model-nowhere/,
    ]);
  });

  it('a YAML syntax error names the document', async () => {
    await expectRejected(`${config()}---\nkind: ModelDeployment\nspec: { model: [unclosed\n`, [
      /gantry\.yaml document 6: /,
    ]);
  });

  it('a valid edit after rejected ones is accepted, one version after the last good one', async () => {
    const version = stack.gateway.config.current().version;
    const event = await replaceConfig(
      config([deployment({ name: 'model-z', model: 'model-z', baseUrl: fakeBase(fakeUrl) })]),
    );
    expect(event).toEqual({ ok: true, version: version + 1 });
    expect((await ask('model-z')).model).toBe('model-z');
  });
});

describe('in-flight requests finish on the snapshot they started with', () => {
  it('a slow non-streaming request survives a reload that removes its model; new requests get 404', async () => {
    expect((await replaceConfig(config())).ok).toBe(true);
    const fake = stack.fakes[0]!;
    fake.setFaults([{ match: { model: 'model-slow' }, fault: { type: 'delay', ms: 1_500 } }]);

    let settled = false;
    const inFlight = ask('model-slow', 'slow one').finally(() => (settled = true));
    await until(
      () => fake.requests.some((r) => (r.body as { model?: string }).model === 'model-slow'),
      'the upstream call',
    );

    const event = await replaceConfig(config([], { without: ['model-slow'] }));
    expect(event.ok).toBe(true);
    // The reload really happened while the request was in flight.
    expect(settled).toBe(false);

    const after = await status('model-slow');
    expect(after.status).toBe(404);
    expect(after.body.error?.type).toBe('model_not_found');
    expect(after.body.error?.message).toContain('model-slow');
    expect(await models()).not.toContain('model-slow');

    const res = await inFlight;
    expect(res.choices[0]?.message.content).toBe(fakeAnswer('slow one'));
    expect(res.model).toBe('model-slow');
  });

  it('a stream started before the reload streams to the end', async () => {
    expect((await replaceConfig(config())).ok).toBe(true);
    const fake = stack.fakes[0]!;
    fake.setFaults([
      { match: { model: 'model-slow-stream' }, fault: { type: 'slow-stream', chunkDelayMs: 100 } },
    ]);

    const stream = await client().chat.completions.create({
      model: 'model-slow-stream',
      stream: true,
      messages: [{ role: 'user', content: 'stream through a reload' }],
    });
    const iterator = stream[Symbol.asyncIterator]();
    let text = '';
    // Read until the first content arrives: the stream is committed on the old snapshot.
    while (text === '') {
      const step = await iterator.next();
      expect(step.done).toBe(false);
      text += step.value?.choices[0]?.delta.content ?? '';
    }

    const event = await replaceConfig(config([], { without: ['model-slow-stream'] }));
    expect(event.ok).toBe(true);
    expect((await status('model-slow-stream')).status).toBe(404);

    let finish: string | null | undefined;
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) {
      text += step.value.choices[0]?.delta.content ?? '';
      finish = step.value.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(fakeAnswer('stream through a reload'));
    expect(finish).toBe('stop');
  });
});

describe('loadConfigFile error messages', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-load-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function load(text: string, env: Record<string, string> = {}) {
    const file = join(dir, 'gantry.yaml');
    await writeFile(file, text);
    return loadConfigFile(file, { env, version: 1 });
  }
  const md = (name: string, spec: Record<string, unknown>) =>
    manifest('ModelDeployment', name, {
      model: name,
      provider: 'openai',
      upstreamModel: name,
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKeyEnv: 'SET_KEY',
      ...spec,
    });

  it('reports every parse and schema error, each with its document and field', async () => {
    const result = await load(
      [
        tenant('acme'),
        md('bad-deployment', { provider: undefined, weight: -1, colour: 'blue' }),
        manifest('Gadget', 'widget', {}),
        '---\nkind: Tenant\nspec: { models: [unclosed\n',
        manifest('ApiKey', 'bad-key', { tenantRef: { name: 'acme' }, keyHash: 'not-hex' }),
        manifest('Tenant', 'bad-tier', { tier: 'platinum', models: ['*'] }),
      ].join(''),
      { SET_KEY: 'x' },
    );
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    const expected = [
      /^gantry\.yaml document 2 \(ModelDeployment\/bad-deployment\): \/spec\/provider: is required$/,
      /^gantry\.yaml document 2 \(ModelDeployment\/bad-deployment\): \/spec\/weight: must be >= 0$/,
      /^gantry\.yaml document 2 \(ModelDeployment\/bad-deployment\): \/spec: unknown property "colour"$/,
      /^gantry\.yaml document 3: kind: must be one of /,
      /^gantry\.yaml document 4: /,
      /^gantry\.yaml document 5 \(ApiKey\/bad-key\): \/spec\/keyHash: must match pattern/,
      /^gantry\.yaml document 6 \(Tenant\/bad-tier\): \/spec\/tier: must be one of: free, pro, enterprise$/,
    ];
    for (const pattern of expected)
      expect(
        errors.some((e) => pattern.test(e)),
        `${pattern} in\n${errors.join('\n')}`,
      ).toBe(true);
    // Document 1 is fine and is not blamed.
    expect(errors.some((e) => e.includes('document 1'))).toBe(false);
  });

  it('reports every cross-reference error, each with its document and field', async () => {
    const result = await load(
      [
        tenant('acme', ['*'], { guardrails: { policyRef: { name: 'no-such-policy' } } }),
        manifest('ApiKey', 'orphan', { tenantRef: { name: 'ghost' }, keyHash: sha256('k1') }),
        md('needs-env', { apiKeyEnv: 'UNSET_PROVIDER_KEY' }),
        md('with-fallback', { fallbacks: ['nowhere'] }),
        tenant('acme'),
        manifest('ApiKey', 'hashless', { tenantRef: { name: 'acme' } }),
        md('no-base-url', { provider: 'azure-openai', baseUrl: undefined }),
      ].join(''),
      { SET_KEY: 'x' },
    );
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    const expected = [
      /^gantry\.yaml document 1 \(Tenant\/acme\): spec\.guardrails\.policyRef: GuardrailPolicy no-such-policy not found$/,
      /^gantry\.yaml document 2 \(ApiKey\/orphan\): spec\.tenantRef: Tenant ghost not found$/,
      /^gantry\.yaml document 3 \(ModelDeployment\/needs-env\): spec\.apiKeyEnv: environment variable UNSET_PROVIDER_KEY is not set$/,
      /^gantry\.yaml document 4 \(ModelDeployment\/with-fallback\): spec\.fallbacks: no ModelDeployment serves nowhere$/,
      /^gantry\.yaml document 5 \(Tenant\/acme\): metadata\.name: Tenant\/acme is already defined at gantry\.yaml document 1/,
      /^gantry\.yaml document 6 \(ApiKey\/hashless\): spec\.keyHash: required/,
      /^gantry\.yaml document 7 \(ModelDeployment\/no-base-url\): spec\.baseUrl: required for provider azure-openai$/,
    ];
    for (const pattern of expected)
      expect(
        errors.some((e) => pattern.test(e)),
        `${pattern} in\n${errors.join('\n')}`,
      ).toBe(true);
    expect(errors).toHaveLength(expected.length);
  });

  it('a missing file is an error naming the file', async () => {
    const missing = join(dir, 'absent.yaml');
    const result = await loadConfigFile(missing, { env: {}, version: 1 });
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.errors.join('\n')).toContain(missing);
  });

  it('a valid file loads', async () => {
    const result = await load([tenant('acme'), md('fine', {}), apiKey('k', 'sk-ok', 'acme')].join(''), {
      SET_KEY: 'x',
    });
    expect(result.ok).toBe(true);
    expect(result.ok && [...result.snapshot.models.keys()]).toEqual(['fine']);
  });
});

describe('startup with an invalid config', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-start-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('fails with a message naming the problem', async () => {
    const file = join(dir, 'gantry.yaml');
    await writeFile(file, [tenant('acme'), apiKey('orphan', 'sk-x', 'nobody')].join(''));
    await expect(startGateway({ configFile: file, env: {}, watch: false })).rejects.toThrow(
      /invalid config[\s\S]*gantry\.yaml document 2 \(ApiKey\/orphan\): spec\.tenantRef: Tenant nobody not found/,
    );
  });

  it('fails on a schema error too', async () => {
    const file = join(dir, 'schema.yaml');
    await writeFile(file, manifest('Tenant', 'acme', { models: 'everything' }));
    await expect(startGateway({ configFile: file, env: {}, watch: false })).rejects.toThrow(
      /invalid config[\s\S]*schema\.yaml document 1 \(Tenant\/acme\): \/spec\/models: must be array/,
    );
  });

  it('fails when the file does not exist', async () => {
    const file = join(dir, 'nope.yaml');
    await expect(startGateway({ configFile: file, env: {}, watch: false })).rejects.toThrow(
      /invalid config[\s\S]*nope\.yaml/,
    );
  });
});
