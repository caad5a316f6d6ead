/** Backpressure between two real sockets on loopback: a peer that stops reading pauses the source. */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { until } from '../../../test/harness/until.ts';
import { relay } from './relay.ts';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise((r) => s.close(r));
  }
});

/** A connected pair: the server's end and the client's. */
async function pair(): Promise<{ server: WebSocket; client: WebSocket }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(wss);
  await new Promise((r) => wss.once('listening', r));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const server = await new Promise<WebSocket>((r) => wss.once('connection', r));
  await new Promise((r) => (client.readyState === WebSocket.OPEN ? r(null) : client.once('open', r)));
  return { server, client };
}

describe('relay', () => {
  it('stops reading the source while the destination does not read, and resumes after', async () => {
    const source = await pair();
    const dest = await pair();
    dest.client.pause(); // a client that stopped reading
    let received = 0;
    dest.client.on('message', () => received++);
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    while (!source.server.isPaused && sent < 2_000) {
      relay(source.server, dest.server, chunk, 512 * 1024, 128 * 1024);
      sent++;
    }
    expect(source.server.isPaused).toBe(true);
    expect(dest.server.bufferedAmount).toBeGreaterThan(512 * 1024);
    dest.client.resume();
    await until('the source to be read again', async () => (source.server.isPaused ? undefined : true));
    await until('every message delivered', async () => (received === sent ? true : undefined));
  });

  it('sends nothing to a closed destination', async () => {
    const source = await pair();
    const dest = await pair();
    dest.server.terminate();
    relay(source.server, dest.server, 'late');
    expect(dest.server.bufferedAmount).toBe(0);
    expect(source.server.isPaused).toBe(false);
  });
});
