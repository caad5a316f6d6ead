/**
 * The process side of a real test server (redis-server, Milvus Lite): start it on a free
 * loopback port, poll until it is healthy, and stop, restart, pause or resume it. What the
 * server is and how to tell it is healthy come from the caller; the lifecycle is the same
 * for every server.
 */
import { readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Test servers listen on loopback only. */
export const HOST = '127.0.0.1';

const STOP_TIMEOUT_MS = 5_000;
const START_ATTEMPTS = 5;

export interface ServerSpec {
  /** How errors name the server, e.g. `redis-server`. */
  readonly name: string;
  readonly command: string;
  args(port: number): string[];
  /** Variables added to this process's environment for the server; none means it inherits it as is. */
  readonly env?: NodeJS.ProcessEnv;
  /** One health check; true once the server on the port is ready for clients. */
  healthy(port: number): Promise<boolean>;
  /** What healthy means, for the timeout error: `did not ${readiness} on port …`. */
  readonly readiness: string;
  readonly startTimeoutMs: number;
  /** Pause between health checks. */
  readonly pollMs: number;
}

export interface ServerProcess {
  readonly port: number;
  readonly running: boolean;
  /** SIGTERM, SIGKILL after a grace period; no-op when already stopped. */
  stop(): Promise<void>;
  /** Stops the server if it runs and starts it again on the same port. */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open but nothing answers. */
  pause(): void;
  /** SIGCONT: a paused server then runs what it received meanwhile. */
  resume(): void;
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

interface Spawned {
  child: ChildProcess;
  exited: Promise<void>;
  output: () => string;
}

function spawnServer(spec: ServerSpec, port: number): Spawned {
  const child = spawn(spec.command, spec.args(port), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: spec.env === undefined ? undefined : { ...process.env, ...spec.env },
  });
  // The tail of the server's output, for the error when it fails to start.
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

/** Polls the health check until it passes; rejects early if the process died (e.g. port taken). */
async function waitUntilReady(spec: ServerSpec, port: number, s: Spawned): Promise<void> {
  let dead = false;
  void s.exited.then(() => (dead = true));
  const deadline = Date.now() + spec.startTimeoutMs;
  while (Date.now() < deadline) {
    if (dead) throw new Error(`${spec.name} exited during start on port ${port}:\n${s.output()}`);
    if (await spec.healthy(port)) return;
    await new Promise((r) => setTimeout(r, spec.pollMs));
  }
  s.child.kill('SIGKILL');
  throw new Error(
    `${spec.name} did not ${spec.readiness} on port ${port} within ${spec.startTimeoutMs} ms:\n${s.output()}`,
  );
}

/** Linux: /proc/<pid>/stat's third field is T once a SIGSTOP took effect. */
function waitForStopped(pid: number): void {
  const deadline = Date.now() + 2_000;
  while (Date.now() < deadline) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    } catch {
      return; // no /proc (or the process is gone): nothing to wait for
    }
    if (state === 'T' || state === 't') return;
  }
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
 * Starts the server on a free loopback port, trying a fresh port when one is taken between
 * freePort() and the server's bind. The caller owns it and must call stop().
 */
export async function startServerProcess(spec: ServerSpec): Promise<ServerProcess> {
  let current: Spawned | undefined;
  let port = 0;
  let lastError: unknown;
  for (let attempt = 0; attempt < START_ATTEMPTS && !current; attempt++) {
    port = await freePort();
    const s = spawnServer(spec, port);
    try {
      await waitUntilReady(spec, port, s);
      current = s;
    } catch (err) {
      lastError = err;
      await stopSpawned(s);
    }
  }
  if (!current) throw lastError;

  return {
    port,
    get running() {
      return current !== undefined && current.child.exitCode === null && current.child.signalCode === null;
    },
    async stop() {
      if (current) await stopSpawned(current);
    },
    async restart() {
      if (current) await stopSpawned(current);
      const s = spawnServer(spec, port);
      await waitUntilReady(spec, port, s);
      current = s;
    },
    pause() {
      if (!current?.child.pid) return;
      current.child.kill('SIGSTOP');
      // kill() returns before the stop takes effect; on a loaded machine a request sent right
      // after could still be answered. Wait (bounded) until the kernel reports it stopped.
      waitForStopped(current.child.pid);
    },
    resume() {
      current?.child.kill('SIGCONT');
    },
  };
}
