/**
 * The second floor of proxy-overhead: nginx as a reverse proxy doing nothing but relaying, on
 * the gateway core, with upstream keep-alive. Not Node: what it adds over direct is what any
 * proxy pays on this machine (two loopback hops, a process woken twice per request), so the
 * Node floor's and Gantry's figures can be read against it. nginx comes from the Debian
 * package, installed when missing as the harness installs redis-server; when it cannot be,
 * the run says why and goes on without this row.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { freePort, waitForHttp } from './procs.ts';
import type { BenchContext } from './section.ts';
import type { Target } from './target.ts';
import { UPSTREAM_KEY } from './upstream.ts';

const APT_TIMEOUT_MS = 300_000;
/** Answered by nginx itself: readiness must not depend on the upstream's paths. */
const READY_PATH = '/_floor';

export type NginxInstall = { ok: true; bin: string } | { ok: false; reason: string };

/** PATH first, then where Debian puts it (sbin is not on every PATH). */
export function findNginx(path = process.env.PATH ?? ''): string | undefined {
  for (const dir of [...path.split(delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin']) {
    if (!dir) continue;
    const candidate = join(dir, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function apt(args: string[]): { ok: boolean; output: string } {
  const root = process.getuid?.() === 0;
  const [cmd, ...rest] = root ? ['apt-get', ...args] : ['sudo', '-n', 'apt-get', ...args];
  const res = spawnSync(cmd!, rest, {
    encoding: 'utf8',
    // The package's postinst may try to start the system service; a container refuses, which is fine.
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: APT_TIMEOUT_MS,
  });
  return {
    ok: res.status === 0,
    output: `${res.stdout ?? ''}${res.stderr ?? ''}${res.error?.message ?? ''}`,
  };
}

const lastLine = (text: string): string =>
  text.trim().split('\n').filter(Boolean).slice(-1)[0]?.slice(0, 200) ?? 'no output';

/** The nginx binary, installing the Debian package when missing; never throws. */
export function installNginx(): NginxInstall {
  const found = findNginx();
  if (found) return { ok: true, bin: found };
  const install = ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', '--no-install-recommends', 'nginx'];
  let res = apt(install);
  if (!res.ok && !findNginx()) {
    // A fresh image often has empty package lists: refresh once and try again.
    const update = apt(['-o', 'DPkg::Lock::Timeout=300', 'update']);
    if (!update.ok) return { ok: false, reason: `apt-get update failed (${lastLine(update.output)})` };
    res = apt(install);
  }
  const bin = findNginx();
  return bin
    ? { ok: true, bin }
    : { ok: false, reason: `apt-get install nginx failed (${lastLine(res.output)})` };
}

/**
 * One process (no master, one worker's work), no access log, upstream connections kept alive
 * and never retired by a request count (nginx closes a keep-alive connection after 1000
 * requests by default, which the Node floor never does), responses relayed as they arrive
 * (an event stream chunk by chunk, as the Node floor relays it).
 */
export function nginxConfig(opts: { dir: string; port: number; upstream: string }): string {
  const upstream = new URL(opts.upstream);
  const temp = (name: string): string => join(opts.dir, name);
  return `daemon off;
master_process off;
worker_processes 1;
pid ${temp('nginx.pid')};
error_log stderr warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${temp('client_body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  keepalive_requests 1000000;
  keepalive_timeout 75s;
  upstream fake {
    server ${upstream.hostname}:${upstream.port};
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${opts.port};
    location = ${READY_PATH} { return 200 "nginx floor\\n"; }
    location / {
      proxy_pass http://fake;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

export async function startNginxFloor(ctx: BenchContext, bin: string, upstreamUrl: string): Promise<Target> {
  const dir = await mkdtemp(join(ctx.scratchDir, 'nginx-'));
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  await mkdir(join(dir, 'logs'), { recursive: true });
  await writeFile(conf, nginxConfig({ dir, port, upstream: upstreamUrl }));
  const startedAtMs = Date.now();
  // -p: its prefix (where it would open logs/error.log before reading error_log) is ours, not /var/log.
  const child = ctx.processes.start({
    name: 'nginx floor',
    command: bin,
    args: ['-p', dir, '-c', conf, '-e', 'stderr'],
    cwd: dir,
    env: { ...process.env },
    cores: ctx.cpus.gatewayCores,
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(child, `${origin}${READY_PATH}`, (s) => s === 200);
  } catch (err) {
    await child.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    name: 'nginx',
    label: 'nginx reverse proxy (one process, upstream keep-alive, no work)',
    origin,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` },
    child,
    startedAtMs,
    async stop() {
      await child.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
