/**
 * A pod serving a published snapshot without one deployment's apiKeyEnv (left out): requests
 * for the model only that deployment serves get a 503 naming it, not a 404 or a stand-in.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePublished, PUBLISHED_FORMAT } from '../../dataplane/src/config/published.ts';
import { providerEnvOnly } from '../../dataplane/src/config/provider-env.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-left-out';
let stack: Stack;
let client: OpenAI;

/** The harness's YAML documents are one JSON object each: a published snapshot lists them. */
const asObject = (doc: string): unknown => JSON.parse(doc.slice('---\n'.length));

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!) }), tenant('acme')].join(''),
  );
  const url = stack.fakes[0]!.url;
  // What the operator publishes: moderation through a key this pod was not given.
  const text = JSON.stringify({
    format: PUBLISHED_FORMAT,
    version: 2,
    hash: 'h2',
    credentials: {},
    manifests: [
      deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url) }),
      deployment({
        name: 'mod',
        model: 'omni-moderation-latest',
        baseUrl: fakeBase(url),
        capabilities: ['moderations'],
        extra: { apiKeyEnv: 'MODERATION_API_KEY' },
      }),
      deployment({
        name: 'big',
        model: 'big-test',
        baseUrl: fakeBase(url),
        extra: { apiKeyEnv: 'MODERATION_API_KEY' },
      }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
    ].map(asObject),
  });
  const env = providerEnvOnly({
    GANTRY_PROVIDER_ENV: 'FAKE_PROVIDER_KEY,MODERATION_API_KEY',
    FAKE_PROVIDER_KEY: 'sk-fake',
  });
  const compiled = compilePublished(text, { env, source: 'secret gantry/snapshot' });
  if (!compiled.ok) throw new Error(compiled.errors.join('; '));
  stack.gateway.config.apply(compiled);
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

describe('a model whose every deployment is left out of this pod', () => {
  it('moderation answers 503 model_unavailable, not the built-in classifier', async () => {
    const err = await client.moderations.create({ input: 'hello' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const api = err as InstanceType<typeof OpenAI.APIError>;
    expect(api.status).toBe(503);
    expect(api.error).toMatchObject({
      type: 'model_unavailable',
      code: 503,
      param: 'model',
      message: expect.stringContaining(
        'model omni-moderation-latest is configured but not served in this pod',
      ) as unknown,
    });
  });

  it('chat and model lookup answer the same 503; the served model still works', async () => {
    const chat = await client.chat.completions
      .create({ model: 'big-test', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect((chat as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    const lookup = await client.models.retrieve('big-test').catch((e: unknown) => e);
    expect((lookup as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    const ok = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(ok.choices[0]?.message.content).toBeTruthy();
  });

  it('a model nothing configures is still a 404', async () => {
    const err = await client.chat.completions
      .create({ model: 'nowhere', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  });
});

describe('what the pod reports serving less', () => {
  it('/readyz names each left-out deployment and its variable', async () => {
    const res = await fetch(`${stack.gateway.adminUrl}/readyz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { config: { status: string; leftOut: unknown } };
    expect(body.config.status).toBe('ok');
    expect(body.config.leftOut).toEqual([
      { deployment: 'big', env: 'MODERATION_API_KEY' },
      { deployment: 'mod', env: 'MODERATION_API_KEY' },
    ]);
  });

  it('gantry_config_left_out_deployments counts them', async () => {
    const text = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
    expect(text).toMatch(/^gantry_config_left_out_deployments 2$/m);
  });
});
