import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installNginx, nginxConfig } from './nginx-floor.ts';
import { freePort, waitForHttp, type Child } from './procs.ts';

describe('nginx floor config', () => {
  it('keeps upstream connections alive, relays as it reads and writes nothing outside its dir', () => {
    const conf = nginxConfig({ dir: '/tmp/x', port: 8123, upstream: 'http://127.0.0.1:9001' });
    expect(conf).toContain('server 127.0.0.1:9001;');
    expect(conf).toMatch(/keepalive 64;/);
    expect(conf).toContain('proxy_set_header Connection "";');
    expect(conf).toContain('proxy_buffering off;');
    expect(conf).toContain('listen 127.0.0.1:8123;');
    expect(conf).toContain('access_log off;');
    for (const path of conf.match(/(?:pid|_temp_path) (\S+);/g) ?? []) expect(path).toContain('/tmp/x/');
  });
});

// The real nginx in front of a real HTTP server: the bench's floor must relay a chat body and a
// stream unchanged and keep one upstream connection for consecutive requests.
describe('nginx floor relays', () => {
  const install = installNginx();
  let upstream: Server;
  let child: Child & { kill(): void };
  let dir: string;
  let origin: string;
  const upstreamSockets = new Set<unknown>();

  beforeAll(async () => {
    if (!install.ok) throw new Error(`nginx is needed for this test: ${install.reason}`);
    upstream = createServer((req, res) => {
      upstreamSockets.add(req.socket);
      const stream = req.url === '/stream';
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (!stream) {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ echo: body, auth: req.headers.authorization }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: one\n\n');
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const address = upstream.address();
    const upstreamPort = typeof address === 'object' && address ? address.port : 0;
    dir = await mkdtemp(join(tmpdir(), 'nginx-floor-test-'));
    const port = await freePort();
    const conf = join(dir, 'nginx.conf');
    await writeFile(conf, nginxConfig({ dir, port, upstream: `http://127.0.0.1:${upstreamPort}` }));
    const proc = spawn(install.bin, ['-p', dir, '-c', conf, '-e', 'stderr'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    proc.stderr.on('data', (d: Buffer) => (tail += d.toString()));
    child = {
      name: 'nginx',
      pid: proc.pid ?? 0,
      outputTail: () => tail,
      running: () => proc.exitCode === null && proc.signalCode === null,
      stop: async () => undefined,
      kill: () => proc.kill('SIGTERM'),
    };
    origin = `http://127.0.0.1:${port}`;
    await waitForHttp(child, `${origin}/_floor`, (s) => s === 200);
  });

  afterAll(async () => {
    child?.kill();
    upstream?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('passes a JSON body and the Bearer key through, on one kept-alive upstream connection', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' },
        body: `{"n":${i}}`,
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ echo: `{"n":${i}}`, auth: 'Bearer sk-x' });
    }
    expect(upstreamSockets.size).toBe(1);
  });

  it('relays an event stream to its end', async () => {
    const res = await request(`${origin}/stream`, { method: 'POST', body: '{}' });
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(await res.body.text()).toBe('data: one\n\ndata: [DONE]\n\n');
  });
});
