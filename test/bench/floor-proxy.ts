/**
 * The floor: the least a Node proxy can do, for the proxy-overhead section to set Gantry's
 * figures against. node:http in, one undici Pool out, no framework, no auth, no parsing,
 * no logging. A JSON answer is buffered and written once with its length (as Gantry writes
 * one); an event stream is relayed chunk by chunk. What it adds over calling the upstream
 * directly is what two loopback hops and a Node event loop cost on this machine.
 *
 *   node --import tsx test/bench/floor-proxy.ts <port> <upstream origin>
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';

const [portArg, upstream] = process.argv.slice(2);
if (!portArg || !upstream) {
  process.stderr.write('usage: floor-proxy.ts <port> <upstream origin>\n');
  process.exit(2);
}
// As many upstream connections as the bench opens downstream, reused (keep-alive).
const pool = new Pool(upstream, { connections: 64, pipelining: 1 });

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('floor proxy\n');
    return;
  }
  const body = await readBody(req);
  const up = await pool.request({
    method: 'POST',
    path: req.url ?? '/',
    headers: {
      'content-type': 'application/json',
      ...(req.headers.authorization && { authorization: req.headers.authorization }),
    },
    body,
  });
  const type = String(up.headers['content-type'] ?? 'application/json');
  if (!type.startsWith('text/event-stream')) {
    const answer = Buffer.from(await up.body.arrayBuffer());
    res.writeHead(up.statusCode, { 'content-type': type, 'content-length': answer.length }).end(answer);
    return;
  }
  res.writeHead(up.statusCode, { 'content-type': type, 'cache-control': 'no-cache' });
  for await (const chunk of up.body) res.write(chunk as Buffer);
  res.end();
}

const server = createServer((req, res) => {
  relay(req, res).catch((err: unknown) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(String(err));
  });
});
server.listen(Number(portArg), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void pool.close().then(() => process.exit(0));
  server.closeAllConnections();
});
