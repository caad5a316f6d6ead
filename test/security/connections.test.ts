/**
 * Connections that never finish their request cannot hold the gateway: a real gateway
 * process closes them at the receive timeout, closes an unauthenticated one right after its
 * 401, and keeps serving (API and /readyz) with many more held open than its cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { rawConnect, spawnGateway, type GatewayProcess, type RawClient } from '../harness/gateway-spawn.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';

const KEY = 'sk-test-connections';
const CAP = 40;
const HELD = 150;

let fake: FakeProvider;
const config = () =>
  [
    deployment({ name: 'gpt', model: 'gpt-4o-mini', baseUrl: fakeBase(fake.url) }),
    tenant('acme'),
    apiKey('k', KEY, 'acme'),
  ].join('');

/** Headers of a chat request announcing a body of `length` bytes, and the first 10 of them. */
function partialRequest(key: string, length = 10_000): string {
  return (
    `POST /v1/chat/completions HTTP/1.1\r\nHost: gantry\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"model":"`
  );
}

beforeAll(async () => {
  fake = await startFakeProvider({ port: 0 });
});
afterAll(() => fake.close());

describe('with a 1 s receive timeout', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await spawnGateway(config(), ['--receive-timeout-ms', '1000', '--headers-timeout-ms', '1000']);
  });
  afterAll(() => gw.kill());

  it('closes an authenticated request whose body never finishes, with a 408', async () => {
    const c = await rawConnect(gw.port, partialRequest(KEY));
    const ms = await c.closed;
    expect(c.data()).toMatch(/^HTTP\/1\.1 408 /);
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(4_000);
  });

  it('closes a connection whose headers never finish', async () => {
    const c = await rawConnect(gw.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: gantry\r\n');
    const ms = await c.closed;
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(4_000);
  });

  it('does not cut a stream that outlasts the receive timeout once its request has arrived', async () => {
    // About 14 chunks 200 ms apart: nearly three receive timeouts.
    fake.setFaults([{ match: { stream: true }, fault: { type: 'slow-stream', chunkDelayMs: 200 } }]);
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          stream: true,
          messages: [{ role: 'user', content: 'take your time' }],
        }),
      });
      const started = Date.now();
      const body = await res.text();
      expect(Date.now() - started).toBeGreaterThan(1_500);
      expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    } finally {
      fake.reset();
    }
  });

  it('still serves a request that arrives in time', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
  });
});

describe(`with default timeouts and a cap of ${CAP} connections`, () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await spawnGateway(config(), ['--max-connections', String(CAP)]);
  });
  afterAll(() => gw.kill());

  it('answers 401 to a wrong key with a pending body and closes the connection at once', async () => {
    const c = await rawConnect(gw.port, partialRequest('sk-wrong', 1_000_000));
    const ms = await c.closed;
    expect(c.data()).toMatch(/^HTTP\/1\.1 401 /);
    expect(c.data().toLowerCase()).toContain('connection: close');
    expect(c.data()).toContain('"authentication_error"');
    // The receive timeout is 30 s: only the early close explains this.
    expect(ms).toBeLessThan(5_000);
  });

  it(`keeps serving the API and /readyz with ${HELD} never-finishing requests held open`, async () => {
    const held: RawClient[] = [];
    for (let i = 0; i < HELD; i++) held.push(await rawConnect(gw.port, partialRequest(KEY)));
    // Each connection beyond the cap evicted an older held one.
    let closed = 0;
    await Promise.all(held.slice(0, HELD - CAP).map((c) => c.closed.then(() => closed++)));
    expect(closed).toBe(HELD - CAP);

    const ready = await fetch(`${gw.adminUrl}/readyz`);
    expect(ready.status).toBe(200);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still there?' }] }),
    });
    expect(res.status).toBe(200);
    expect(gw.child.exitCode).toBeNull();
    for (const c of held) c.socket.destroy();
  });
});
