/**
 * A real redis-server for tests: found on PATH or installed from the Debian archive, started
 * on a free loopback port with persistence off, and stopped (or restarted on the same port)
 * on demand. Used by the vitest globalSetup (one shared server per run) and directly by tests
 * that need a private server they can kill mid-run.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { HOST, startServerProcess, type ServerProcess } from './server-process.ts';

// freePort was part of this module's API before the process lifecycle moved out; it stays exported.
export { freePort } from './server-process.ts';

/** Env var through which the shared server's URL reaches test workers. */
export const REDIS_URL_ENV = 'GANTRY_TEST_REDIS_URL';

const START_TIMEOUT_MS = 10_000;

/**
 * A private redis-server. restart() comes back on the same port, so clients holding the URL
 * reconnect to it, with no data; pause() makes it a hung Redis.
 */
export interface RedisInstance extends ServerProcess {
  readonly url: string;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** PATH first, then the places Debian puts it (sbin dirs are not on every PATH). */
export function findRedisServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin', '/usr/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, 'redis-server');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function runApt(args: string[]): { ok: boolean; output: string } {
  const root = process.getuid?.() === 0;
  const [cmd, ...rest] = root ? ['apt-get', ...args] : ['sudo', '-n', 'apt-get', ...args];
  const res = spawnSync(cmd as string, rest, {
    encoding: 'utf8',
    // The package's postinst may try to start a system service; containers refuse, which is fine.
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 300_000,
  });
  return {
    ok: res.status === 0,
    output: `${res.stdout ?? ''}${res.stderr ?? ''}${res.error?.message ?? ''}`,
  };
}

/**
 * Returns the path of a redis-server binary, installing the Debian package when none exists.
 * Idempotent and instant when already installed. Waits on dpkg's lock so parallel callers
 * serialise instead of failing.
 */
export function ensureRedisServer(): string {
  const found = findRedisServer();
  if (found) return found;
  const install = [
    '-o',
    'DPkg::Lock::Timeout=300',
    'install',
    '-y',
    '--no-install-recommends',
    'redis-server',
  ];
  let res = runApt(install);
  if (!res.ok && !findRedisServer()) {
    // A fresh image often has empty package lists; refresh once and try again.
    const update = runApt(['-o', 'DPkg::Lock::Timeout=300', 'update']);
    if (!update.ok) throw new Error(`apt-get update failed:\n${update.output}`);
    res = runApt(install);
  }
  const path = findRedisServer();
  if (!path) throw new Error(`redis-server is missing and could not be installed:\n${res.output}`);
  return path;
}

/** One PING over a raw socket: true when the server answered +PONG. */
export function ping(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: HOST, port });
    let buf = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      buf += d.toString('utf8');
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}

/** redis-server on the port, persistence off, logging to stdout (which the harness keeps for errors). */
function redisArgs(port: number, dir: string): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    '',
  ];
}

/**
 * Starts a private redis-server on a free loopback port (installing redis-server if needed).
 * The caller owns it and must call stop().
 */
export async function startRedis(): Promise<RedisInstance> {
  const bin = ensureRedisServer();
  // Persistence is off, so the server writes nothing; its working dir only has to exist.
  const dir = tmpdir();
  const server = await startServerProcess({
    name: 'redis-server',
    command: bin,
    args: (port) => redisArgs(port, dir),
    healthy: (port) => ping(port, 250),
    readiness: 'answer PING',
    startTimeoutMs: START_TIMEOUT_MS,
    pollMs: 15,
  });
  return Object.assign(server, { url: `redis://${HOST}:${server.port}` });
}

/**
 * The shared server's URL inside a test worker. The globalSetup exports it through the env;
 * a test run without the globalSetup (e.g. a custom config) fails loudly rather than skipping.
 */
export function testRedisUrl(): string {
  const url = process.env[REDIS_URL_ENV];
  if (!url)
    throw new Error(
      `${REDIS_URL_ENV} is not set: run tests through vitest with test/harness/global-setup.ts`,
    );
  return url;
}
