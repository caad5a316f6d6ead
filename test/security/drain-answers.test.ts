/**
 * While the gateway drains, the last answer on each connection says `connection: close`: the
 * answer to a request already in flight, or to one arriving during the drain, including the
 * ones Fastify answers synchronously before any hook runs (a path it cannot decode). Raw
 * sockets: the late requests are pipelined behind one the upstream holds, so they reach a
 * connection the drain has not closed yet.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../harness/gateway-spawn.ts';
import { parseAnswers, rawChat, RawConnection } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-drain-answers';
const config = ([url]: string[]) =>
  [
    deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
    tenant('acme'),
    apiKey('k', KEY, 'acme'),
  ].join('');

describe('a draining gateway', () => {
  let stack: Stack | undefined;
  afterAll(() => stack?.close());

  it('closes the connection after each answer, a bad percent-encoding 400 included', async () => {
    stack = await startStack(config, { drainTimeoutMs: 1_000 });
    const gateway = stack.gateway;
    const fake = stack.fakes[0]!;
    fake.setFaults([{ fault: { type: 'hang' } }]);
    const c = new RawConnection(gateway.url).send(
      rawChat(KEY, { model: 'm', messages: [{ role: 'user', content: 'wait' }] }),
    );
    await until(() => fake.requests.length === 1);
    const closed = gateway.close();
    await until(() => !gateway.app.server.listening);
    c.send('GET /v1/%zz HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.closed;
    await closed;
    stack = undefined;
    const [cut, badUrl, ...more] = parseAnswers(c.text);
    expect(more).toEqual([]);
    expect(cut!.status).toBe(503);
    expect(badUrl!.status).toBe(400);
    expect(badUrl!.body).toMatch(/percent-encoding/);
    expect(badUrl!.headers.connection).toBe('close');
  });

  it('has a request already in flight answered with connection: close', async () => {
    stack = await startStack(config, { drainTimeoutMs: 10_000 });
    const gateway = stack.gateway;
    const fake = stack.fakes[0]!;
    // Long enough to be in flight when the drain starts, well inside the drain's deadline.
    fake.setFaults([{ fault: { type: 'delay', ms: 300 } }]);
    const c = new RawConnection(gateway.url).send(
      rawChat(KEY, { model: 'm', messages: [{ role: 'user', content: 'held' }] }),
    );
    await until(() => fake.requests.length === 1);
    const closed = gateway.close();
    await c.closed;
    await closed;
    stack = undefined;
    const answers = parseAnswers(c.text);
    expect(answers.map((a) => [a.status, a.headers.connection])).toEqual([[200, 'close']]);
  });
});
