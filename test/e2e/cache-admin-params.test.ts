/**
 * The cache management endpoints check who calls before anything else, and check `tenant_id`
 * the way the analytics endpoints do: given at most once, naming a configured tenant. Before,
 * the platform key got a 200 for `?tenant_id=acme&tenant_id=globex` (echoed back as an array),
 * for an empty value and for a tenant that does not exist, and a flush with a broken JSON body
 * and no key was a 400 (the body was parsed before the key was looked at).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const PLATFORM = 'sk-platform-cache-params-0123456789abcdef0123';
const ACME_ADMIN = 'sk-acme-admin-cache-params';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'gpt-test', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        tenant('globex'),
        apiKey('acme-admin', ACME_ADMIN, 'acme', { role: 'admin' }),
      ].join(''),
    { env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_ADMIN_KEY: PLATFORM } },
  );
}, 60_000);
afterAll(() => stack?.close());

type ErrorAnswer = { error: { type: string; param?: string; message: string } };

const call = async (method: 'GET' | 'POST', path: string, key?: string, body?: string) => {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${stack.gateway.url}${path}`, { method, headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & ErrorAnswer };
};

const routes = [
  { method: 'GET', path: '/api/v1/cache/stats' },
  { method: 'GET', path: '/api/v1/cache/metrics' },
  { method: 'POST', path: '/api/v1/cache/flush' },
] as const;

describe.each(routes)('$method $path tenant_id', ({ method, path }) => {
  it('is a 400 naming it when given twice', async () => {
    const r = await call(method, `${path}?tenant_id=acme&tenant_id=globex`, PLATFORM);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tenant_id' });
    expect(r.body.error.message).toContain('once');
  });

  it('is a 400 naming it when empty (a blank field never means every tenant)', async () => {
    const r = await call(method, `${path}?tenant_id=`, PLATFORM);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tenant_id' });
  });

  it('is a 404 naming it for a tenant that does not exist', async () => {
    const r = await call(method, `${path}?tenant_id=no-such-tenant`, PLATFORM);
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ type: 'not_found', param: 'tenant_id' });
  });

  it('answers for a configured tenant, named as a string', async () => {
    const r = await call(method, `${path}?tenant_id=acme`, PLATFORM);
    expect(r.status).toBe(200);
    if (path !== '/api/v1/cache/metrics') expect(r.body.tenant_id).toBe('acme');
  });
});

describe('POST /api/v1/cache/flush authorization', () => {
  it('is a 401 without a key, whatever the body', async () => {
    const r = await call('POST', '/api/v1/cache/flush', undefined, '{"broken');
    expect(r.status).toBe(401);
    expect(r.body.error.type).toBe('authentication_error');
  });

  it("is a 403 for another tenant's admin before the body is read", async () => {
    const r = await call('POST', '/api/v1/cache/flush?tenant_id=globex', ACME_ADMIN, '{"broken');
    expect(r.status).toBe(403);
  });
});
