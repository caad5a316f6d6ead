/**
 * A real redis-server for tests: found on PATH or installed from the Debian archive, started
 * on a free loopback port with persistence off, and stopped (or restarted on the same port)
 * on demand. Used by the vitest globalSetup (one shared server per run) and directly by tests
 * that need a private server they can kill mid-run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** Env var through which the shared server's URL reaches test workers. */
export const REDIS_URL_ENV = 'GANTRY_TEST_REDIS_URL';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

export interface RedisInstance {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, SIGKILL after a grace period); no-op when already stopped. */
  stop(): Promise<void>;
  /** Starts the server again on the same port, so clients holding the URL reconnect to it. Data is gone. */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open but nothing answers, like a hung Redis. */
  pause(): void;
  /** Thaws a paused server (SIGCONT); it then runs what it received meanwhile. */
  resume(): void;
  readonly running: boolean;
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

/** A port the OS just handed out on loopback; it may be taken again before we bind, so callers retry. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, HOST, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
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

interface Spawned {
  child: ChildProcess;
  exited: Promise<void>;
  output: () => string;
}

function spawnServer(bin: string, port: number, dir: string): Spawned {
  const child = spawn(
    bin,
    [
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
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // A run that dies without teardown (Ctrl-C, crash) must not leave servers behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    });
    child.once('error', (err) => {
      out += `\nspawn error: ${err.message}`;
      resolve();
    });
  });
  return { child, exited, output: () => out };
}

/** Polls PING until the server answers; rejects early if the process died (e.g. port taken). */
async function waitUntilReady(port: number, s: Spawned): Promise<void> {
  let dead = false;
  void s.exited.then(() => (dead = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (dead) throw new Error(`redis-server exited during start on port ${port}:\n${s.output()}`);
    if (await ping(port, 250)) return;
    await new Promise((r) => setTimeout(r, 15));
  }
  s.child.kill('SIGKILL');
  throw new Error(
    `redis-server did not answer PING on port ${port} within ${START_TIMEOUT_MS} ms:\n${s.output()}`,
  );
}

async function stopSpawned(s: Spawned): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGCONT'); // a paused server cannot handle SIGTERM
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await s.exited;
  clearTimeout(timer);
}

/**
 * Starts a private redis-server on a free loopback port (installing redis-server if needed).
 * The caller owns it and must call stop().
 */
export async function startRedis(): Promise<RedisInstance> {
  const bin = ensureRedisServer();
  // Persistence is off, so the server writes nothing; its working dir only has to exist.
  const dir = tmpdir();
  let current: Spawned | undefined;
  let port = 0;
  let lastError: unknown;
  for (let attempt = 0; attempt < 5 && !current; attempt++) {
    port = await freePort();
    const s = spawnServer(bin, port, dir);
    try {
      await waitUntilReady(port, s);
      current = s;
    } catch (err) {
      lastError = err;
      await stopSpawned(s);
    }
  }
  if (!current) throw lastError;

  const instance: RedisInstance = {
    url: `redis://${HOST}:${port}`,
    port,
    get running() {
      return current !== undefined && current.child.exitCode === null && current.child.signalCode === null;
    },
    async stop() {
      if (current) await stopSpawned(current);
    },
    async restart() {
      if (current) await stopSpawned(current);
      const s = spawnServer(bin, port, dir);
      await waitUntilReady(port, s);
      current = s;
    },
    pause() {
      current?.child.kill('SIGSTOP');
    },
    resume() {
      current?.child.kill('SIGCONT');
    },
  };
  return instance;
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
