/**
 * POSTs under /v1/a2a/ that are not the send route: authenticated (they sit under /v1/), an
 * agent name past the bound is the 400 naming `agent`, recorded as the refused A2A call it is,
 * and any other path is a 404 that, like every other unknown path's, writes no usage record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../harness/gateway-spawn.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-a2a-unknown';
let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([u]) =>
    [
      deployment({ name: 'm', model: 'm', baseUrl: fakeBase(u!) }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack?.close());

const post = (path: string, key?: string) =>
  fetch(`${stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
    body: '{}',
  });

const records = async () => {
  const today = new Date().toISOString().slice(0, 10);
  const logs = await stack.gateway.stores.usage.logs({ tenant: 'acme', from: today, to: today, limit: 50 });
  return logs.map((r) => ({ endpoint: r.endpoint, status: r.status, requestedModel: r.requestedModel }));
};

describe('POST under /v1/a2a/ off the send route', () => {
  it('asks for a key first, then answers 404 without recording it', async () => {
    expect((await post('/v1/a2a/helper/tasks/get')).status).toBe(401);
    const res = await post('/v1/a2a/helper/tasks/get', KEY);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      error: { type: 'not_found', message: 'no route POST /v1/a2a/helper/tasks/get' },
    });
  });

  it('records an oversized agent name as a refused a2a call, and the 404 before it not at all', async () => {
    const res = await post(`/v1/a2a/${'a'.repeat(300)}/message/send`, KEY);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { param: 'agent' } });
    await until(async () => (await records()).length > 0);
    expect(await records()).toEqual([{ endpoint: 'a2a', status: 400, requestedModel: '' }]);
  });
});
