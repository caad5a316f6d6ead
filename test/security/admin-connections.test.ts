/**
 * The admin port's own connection cap: sockets held open there are bounded (the oldest
 * unfinished one is closed for each beyond the cap), probes are still answered, and the public
 * port, with its own cap, neither counts them nor closes its own. A real gateway process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { rawConnect, spawnGateway, type GatewayProcess, type RawClient } from '../harness/gateway-spawn.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';

const KEY = 'sk-test-admin-connections';
const ADMIN_CAP = 8;
const HELD = 30;
/** Headers that never finish: the connection holds a request still arriving. */
const UNFINISHED = 'GET /readyz HTTP/1.1\r\nHost: gantry\r\n';

let fake: FakeProvider;
let gw: GatewayProcess;
beforeAll(async () => {
  fake = await startFakeProvider({ port: 0 });
  gw = await spawnGateway(
    [
      deployment({ name: 'gpt', model: 'gpt-4o-mini', baseUrl: fakeBase(fake.url) }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
    ['--admin-max-connections', String(ADMIN_CAP)],
  );
});
afterAll(async () => {
  await gw?.kill();
  await fake?.close();
});

const adminPort = (): number => Number(new URL(gw.adminUrl).port);

/** Which of `clients` the server has closed, once the event loop has seen every close so far. */
function closedFlags(clients: RawClient[]): () => boolean[] {
  const flags = clients.map(() => false);
  clients.forEach((c, i) => void c.closed.then(() => (flags[i] = true)));
  return () => [...flags];
}

describe(`the admin port with a cap of ${ADMIN_CAP} connections`, () => {
  it(`holds at most ${ADMIN_CAP} of ${HELD} unfinished connections and still answers probes`, async () => {
    const held: RawClient[] = [];
    for (let i = 0; i < HELD; i++) held.push(await rawConnect(adminPort(), UNFINISHED));
    // Each connection beyond the cap closed the oldest unfinished one, unanswered.
    await Promise.all(held.slice(0, HELD - ADMIN_CAP).map((c) => c.closed));
    for (const c of held.slice(0, HELD - ADMIN_CAP)) expect(c.data()).toBe('');
    const flags = closedFlags(held);

    const ready = await fetch(`${gw.adminUrl}/readyz`);
    expect(ready.status).toBe(200);
    // The probe's connection took the place of the oldest one still held, and only that one.
    await held[HELD - ADMIN_CAP]!.closed;
    expect(flags().filter((closed) => !closed)).toHaveLength(ADMIN_CAP - 1);
    for (const c of held) c.socket.destroy();
  });

  it('leaves the public port alone: its held connections stay open and it serves', async () => {
    const admin: RawClient[] = [];
    for (let i = 0; i < HELD; i++) admin.push(await rawConnect(adminPort(), UNFINISHED));
    const pub: RawClient[] = [];
    for (let i = 0; i < HELD; i++)
      pub.push(await rawConnect(gw.port, 'GET /v1/models HTTP/1.1\r\nHost: gantry\r\n'));
    const publicClosed = closedFlags(pub);
    await Promise.all(admin.slice(0, HELD - ADMIN_CAP).map((c) => c.closed));

    const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    // An eviction happens as a later connection is accepted, before that answer: on loopback
    // its close would have arrived first.
    expect(publicClosed().some(Boolean)).toBe(false);
    expect(gw.child.exitCode).toBeNull();
    for (const c of [...admin, ...pub]) c.socket.destroy();
  });
});
