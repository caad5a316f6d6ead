/**
 * Authentication and model access over real HTTP: who may call, which models each key sees,
 * what the public port refuses, and that a fallback the key may not use is never tried.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEYS = {
  star: 'sk-auth-star',
  narrow: 'sk-auth-narrow',
  subset: 'sk-auth-subset',
  disabled: 'sk-auth-disabled',
  fallbackDenied: 'sk-auth-fallback-denied',
  tenantFallbackDenied: 'sk-auth-tenant-fallback-denied',
} as const;

const CHAT_MODELS = ['model-a', 'model-b', 'model-c'];
const ALL_MODELS = [
  ...CHAT_MODELS,
  'chat-only',
  'embed-only',
  'primary-denied',
  'primary-tenant-denied',
  'primary-allowed',
  'secret-fallback',
];

let stack: Stack;
/** Serves every model except `secret-fallback`. */
let mainFake: Stack['fakes'][number];
/** Serves only `secret-fallback`: anything it records was a fallback attempt. */
let fallbackFake: Stack['fakes'][number];

beforeAll(async () => {
  stack = await startStack(
    ([main, fallback]) =>
      [
        ...CHAT_MODELS.map((model) => deployment({ name: model, model, baseUrl: fakeBase(main!) })),
        deployment({
          name: 'chat-only',
          model: 'chat-only',
          baseUrl: fakeBase(main!),
          capabilities: ['chat'],
        }),
        deployment({
          name: 'embed-only',
          model: 'embed-only',
          baseUrl: fakeBase(main!),
          capabilities: ['embeddings'],
        }),
        ...['primary-denied', 'primary-tenant-denied', 'primary-allowed'].map((model) =>
          deployment({ name: model, model, baseUrl: fakeBase(main!), fallbacks: ['secret-fallback'] }),
        ),
        deployment({ name: 'secret-fallback', model: 'secret-fallback', baseUrl: fakeBase(fallback!) }),
        tenant('star', ['*']),
        tenant('narrow', ['model-a']),
        tenant('mid', ['model-a', 'model-b']),
        tenant('no-fallback', ['primary-tenant-denied']),
        apiKey('star-key', KEYS.star, 'star'),
        apiKey('narrow-key', KEYS.narrow, 'narrow'),
        // Asks for model-c, which its tenant does not allow: the intersection is model-b only.
        apiKey('subset-key', KEYS.subset, 'mid', { models: ['model-b', 'model-c'] }),
        apiKey('disabled-key', KEYS.disabled, 'star', { disabled: true }),
        apiKey('fallback-denied-key', KEYS.fallbackDenied, 'star', { models: ['primary-denied'] }),
        apiKey('tenant-fallback-denied-key', KEYS.tenantFallbackDenied, 'no-fallback'),
      ].join(''),
    {
      fakes: 2,
      // Fast retries: the fallback tests fail the primary on purpose.
      retry: {
        maxAttempts: 4,
        maxRetryAfterMs: 1_000,
        backoffBaseMs: 2,
        backoffMaxMs: 10,
        maxSameRetries: 1,
      },
    },
  );
  [mainFake, fallbackFake] = stack.fakes as [typeof mainFake, typeof fallbackFake];
});
afterAll(() => stack.close());
beforeEach(() => stack.fakes.forEach((f) => f.reset()));

const providerRequests = () => stack.fakes.reduce((n, f) => n + f.requests.length, 0);

interface ErrorBody {
  error: { message: string; type: string; code: number; param?: string };
}

async function call(
  path: string,
  init: { method?: string; key?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ path: string; status: number; body: unknown; headers: Headers }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${stack.gateway.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Left as text: the shape assertion below reports it.
  }
  return { path, status: res.status, body, headers: res.headers };
}

/**
 * The SPEC.md error shape, with `code` equal to the HTTP status; on /v1/messages the same
 * body plus Anthropic's top-level `type: "error"`.
 */
function expectError(
  res: { path: string; status: number; body: unknown },
  status: number,
  type?: string,
): ErrorBody['error'] {
  expect(res.status).toBe(status);
  const body = res.body as ErrorBody;
  const error = expect.objectContaining({ message: expect.any(String), type: expect.any(String) });
  expect(body).toEqual(res.path.startsWith('/v1/messages') ? { type: 'error', error } : { error });
  expect(body.error.code).toBe(status);
  expect(body.error.message.length).toBeGreaterThan(0);
  if (type) expect(body.error.type).toBe(type);
  return body.error;
}

const chat = (model: string, content = 'hello') => ({ model, messages: [{ role: 'user', content }] });
const client = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });

describe('API keys', () => {
  const endpoints = [
    { path: '/v1/chat/completions', body: chat('model-a') },
    {
      path: '/v1/messages',
      body: { model: 'model-a', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    },
    { path: '/v1/completions', body: { model: 'model-a', prompt: 'hi' } },
    { path: '/v1/embeddings', body: { model: 'embed-only', input: 'hi' } },
    { path: '/v1/models', body: undefined },
  ];

  it.each(endpoints)('a missing key on $path is a 401 in the SPEC error shape', async ({ path, body }) => {
    const error = expectError(await call(path, { body }), 401, 'authentication_error');
    expect(error.message).toMatch(/API key/i);
    expect(providerRequests()).toBe(0);
  });

  it.each(endpoints)('an unknown key on $path is a 401', async ({ path, body }) => {
    expectError(await call(path, { body, key: 'sk-not-a-real-key' }), 401, 'authentication_error');
    expect(providerRequests()).toBe(0);
  });

  it('authenticates before looking at the body: a keyless invalid body is a 401, not a 400', async () => {
    expectError(
      await call('/v1/chat/completions', { body: { model: 'model-a', temperature: 9 } }),
      401,
      'authentication_error',
    );
    expectError(
      await call('/v1/messages', { body: { model: 'model-a', messages: 'not a list' } }),
      401,
      'authentication_error',
    );
  });

  it('rejects malformed Authorization headers', async () => {
    for (const authorization of [`Basic ${KEYS.star}`, 'Bearer', `Bearer ${KEYS.star} extra`, KEYS.star]) {
      expectError(await call('/v1/models', { headers: { authorization } }), 401, 'authentication_error');
    }
  });

  it('the official SDK sees a wrong key as AuthenticationError', async () => {
    const err = await client('sk-wrong')
      .chat.completions.create(chat('model-a') as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    expect(providerRequests()).toBe(0);
  });

  it('accepts the key in x-api-key (Anthropic clients)', async () => {
    const res = await call('/v1/chat/completions', {
      body: chat('model-a'),
      headers: { 'x-api-key': KEYS.star },
    });
    expect(res.status).toBe(200);
    expect((res.body as OpenAI.ChatCompletion).choices[0]?.message.content).toBe(fakeAnswer('hello'));
    const wrong = await call('/v1/models', { headers: { 'x-api-key': 'sk-nope' } });
    expectError(wrong, 401, 'authentication_error');
  });

  it('a disabled key is a 401, for every endpoint', async () => {
    for (const { path, body } of endpoints) {
      expectError(await call(path, { body, key: KEYS.disabled }), 401, 'authentication_error');
    }
    expect(providerRequests()).toBe(0);
  });
});

describe('model access = tenant allow list ∩ key restriction', () => {
  const listed = async (key: string) => (await client(key).models.list()).data.map((m) => m.id).sort();

  it('a tenant allowing only model-a: model-a works, model-b is a 404 naming it', async () => {
    const ok = await client(KEYS.narrow).chat.completions.create({
      model: 'model-a',
      messages: [{ role: 'user', content: 'narrow' }],
    });
    expect(ok.choices[0]?.message.content).toBe(fakeAnswer('narrow'));
    mainFake.reset();

    const error = expectError(
      await call('/v1/chat/completions', { key: KEYS.narrow, body: chat('model-b') }),
      404,
    );
    expect(error.type).toBe('model_not_found');
    expect(error.message).toContain('model-b');
    expect(providerRequests()).toBe(0);
  });

  it('a model the tenant may not use is a 404 on every endpoint, and on /v1/messages too', async () => {
    const embed = expectError(
      await call('/v1/embeddings', { key: KEYS.narrow, body: { model: 'embed-only', input: 'x' } }),
      404,
    );
    expect(embed.message).toContain('embed-only');
    const legacy = expectError(
      await call('/v1/completions', { key: KEYS.narrow, body: { model: 'model-b', prompt: 'x' } }),
      404,
    );
    expect(legacy.message).toContain('model-b');
    const messages = await call('/v1/messages', {
      key: KEYS.narrow,
      body: { model: 'model-b', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status).toBe(404);
    expect(messages.body).toMatchObject({ type: 'error', error: { code: 404 } });
    expect((messages.body as ErrorBody).error.message).toContain('model-b');
    expect(providerRequests()).toBe(0);
  });

  it('a model that does not exist at all is the same 404', async () => {
    const error = expectError(
      await call('/v1/chat/completions', { key: KEYS.star, body: chat('no-such-model') }),
      404,
    );
    expect(error.message).toContain('no-such-model');
  });

  it('GET /v1/models lists exactly the tenant allow list', async () => {
    expect(await listed(KEYS.narrow)).toEqual(['model-a']);
  });

  it('a key restricted inside its tenant gets only the intersection', async () => {
    expect(await listed(KEYS.subset)).toEqual(['model-b']);
    const ok = await call('/v1/chat/completions', { key: KEYS.subset, body: chat('model-b') });
    expect(ok.status).toBe(200);
    // Allowed by the tenant but not by the key.
    expect(
      expectError(await call('/v1/chat/completions', { key: KEYS.subset, body: chat('model-a') }), 404)
        .message,
    ).toContain('model-a');
    // Named by the key but not allowed by the tenant.
    expect(
      expectError(await call('/v1/chat/completions', { key: KEYS.subset, body: chat('model-c') }), 404)
        .message,
    ).toContain('model-c');
  });

  it('a "*" tenant sees every model', async () => {
    expect(await listed(KEYS.star)).toEqual([...ALL_MODELS].sort());
    const res = await call('/v1/chat/completions', { key: KEYS.star, body: chat('model-c') });
    expect(res.status).toBe(200);
  });

  it('the model list is in the OpenAI shape', async () => {
    const res = await call('/v1/models', { key: KEYS.narrow });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [{ id: 'model-a', object: 'model', created: expect.any(Number), owned_by: 'openai' }],
    });
  });
});

describe('administrative routes and unknown routes', () => {
  const adminPaths = [
    '/ui',
    '/ui/',
    '/ui/x',
    '/ui/x/y?tab=keys',
    '/sso',
    '/sso/callback',
    '/sso/callback?code=abc',
    '/login',
    '/login?next=/ui',
  ];

  it.each(adminPaths.flatMap((path) => ['GET', 'POST'].map((method) => ({ path, method }))))(
    '$method $path is refused with 403 and reaches no provider',
    async ({ path, method }) => {
      for (const key of [undefined, KEYS.star]) {
        const res = await call(path, {
          method,
          key,
          ...(method === 'POST' && { body: { username: 'a', password: 'b' } }),
        });
        const error = expectError(res, 403, 'permission_denied');
        expect(error.message).toContain(path.split('?', 1)[0]);
      }
      expect(providerRequests()).toBe(0);
    },
  );

  it('paths that only start with the same letters are not mistaken for admin routes', async () => {
    expectError(await call('/uix', { key: KEYS.star }), 404, 'not_found');
    expectError(await call('/login-help', { key: KEYS.star }), 404, 'not_found');
  });

  it.each([
    { method: 'GET', path: '/v1/nope' },
    { method: 'POST', path: '/v2/chat/completions' },
  ])('$method $path is a 404 in the SPEC error shape', async ({ method, path }) => {
    const error = expectError(await call(path, { method, key: KEYS.star }), 404, 'not_found');
    expect(error.message).toContain(path);
    expect(providerRequests()).toBe(0);
  });

  it.each([
    { method: 'GET', path: '/v1/chat/completions', allow: 'POST' },
    { method: 'DELETE', path: '/v1/models', allow: 'GET' },
  ])(
    '$method $path (a route, another method) is a 405 naming the allowed ones',
    async ({ method, path, allow }) => {
      const res = await call(path, { method, key: KEYS.star });
      const error = expectError(res, 405, 'method_not_allowed');
      expect(error.message).toContain(path);
      expect(res.headers.get('allow')).toContain(allow);
      expect(providerRequests()).toBe(0);
    },
  );
});

describe('an endpoint the model does not support', () => {
  it.each([
    {
      what: 'embeddings on a chat-only model',
      path: '/v1/embeddings',
      model: 'chat-only',
      body: { input: 'x' },
    },
    {
      what: 'chat on an embeddings-only model',
      path: '/v1/chat/completions',
      model: 'embed-only',
      body: { messages: [{ role: 'user', content: 'x' }] },
    },
    {
      what: 'Messages on an embeddings-only model',
      path: '/v1/messages',
      model: 'embed-only',
      body: { max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
    },
    {
      what: 'completions without the capability',
      path: '/v1/completions',
      model: 'chat-only',
      body: { prompt: 'x' },
    },
  ])('$what is a 400 naming the model and the endpoint', async ({ path, model, body }) => {
    const res = await call(path, { key: KEYS.star, body: { model, ...body } });
    expect(res.status).toBe(400);
    const error = (res.body as ErrorBody).error;
    expect(error).toMatchObject({ type: 'unsupported_endpoint', code: 400, param: 'model' });
    expect(error.message).toContain(model);
    // /v1/messages runs on the chat pipeline: the endpoint named is the chat one.
    expect(error.message).toContain(path === '/v1/messages' ? '/v1/chat/completions' : path);
    if (path === '/v1/messages') expect(res.body).toMatchObject({ type: 'error' });
    expect(providerRequests()).toBe(0);
  });

  it('the same models serve the endpoints they do support', async () => {
    const embed = await call('/v1/embeddings', { key: KEYS.star, body: { model: 'embed-only', input: 'x' } });
    expect(embed.status).toBe(200);
    const chatOk = await call('/v1/chat/completions', { key: KEYS.star, body: chat('chat-only') });
    expect(chatOk.status).toBe(200);
  });
});

describe('fallback models obey the same access rules', () => {
  const failPrimaries = () =>
    mainFake.setFaults([
      { match: { path: '/chat/completions' }, fault: { type: 'status', status: 500, message: 'boom' } },
    ]);

  it('control: with access, a failing primary falls back to secret-fallback', async () => {
    failPrimaries();
    const res = await call('/v1/chat/completions', {
      key: KEYS.star,
      body: chat('primary-allowed', 'fall back'),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gantry-provider')).toBe('secret-fallback');
    expect(res.headers.get('x-gantry-failed')).toBe('primary-allowed');
    expect((res.body as OpenAI.ChatCompletion).model).toBe('secret-fallback');
    expect(fallbackFake.requests).toHaveLength(1);
  });

  it.each([
    { who: 'the key restriction', key: KEYS.fallbackDenied, model: 'primary-denied' },
    { who: 'the tenant allow list', key: KEYS.tenantFallbackDenied, model: 'primary-tenant-denied' },
  ])('a fallback excluded by $who is never tried, even when the primary fails', async ({ key, model }) => {
    failPrimaries();
    const res = await call('/v1/chat/completions', { key, body: chat(model, 'no fallback for you') });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect((res.body as ErrorBody).error.code).toBe(res.status);
    expect(res.headers.get('x-gantry-failed')).toBe(model);
    expect(mainFake.requests.length).toBeGreaterThanOrEqual(1);
    expect(mainFake.requests.every((r) => (r.body as { model?: string }).model === model)).toBe(true);
    expect(fallbackFake.requests).toHaveLength(0);
    // Nor is it visible to the key.
    const list = await call('/v1/models', { key });
    expect((list.body as { data: { id: string }[] }).data.map((m) => m.id)).toEqual([model]);
  });

  it('streaming requests obey the same rule', async () => {
    mainFake.setFaults([{ match: { path: '/chat/completions' }, fault: { type: 'status', status: 503 } }]);
    const res = await call('/v1/chat/completions', {
      key: KEYS.fallbackDenied,
      body: { ...chat('primary-denied'), stream: true },
    });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(fallbackFake.requests).toHaveLength(0);
  });
});
