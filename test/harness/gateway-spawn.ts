/**
 * Gantry as a child process, started the way `npm run dev` starts it (dataplane/src/main.ts
 * under tsx), for what only a process shows: signals, exit codes, the command line, and
 * socket limits that must not take the process down. Unlike gateway-process.ts (the fuzz
 * suite's, which keeps every log line), the upstream is a fake provider of the test's own,
 * so tests can inject faults, and the caller sends the signals.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, HOST } from './server-process.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = join(REPO_ROOT, 'dataplane/src/main.ts');
const NODE_ARGS = ['--import', 'tsx', MAIN];

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs main.ts with these arguments to completion (for flags that exit at once). */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...NODE_ARGS, ...args],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 15_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface GatewayProcess {
  url: string;
  adminUrl: string;
  port: number;
  child: ChildProcess;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  output(): string;
  /** SIGKILL if still running, and the temp dir removed. */
  kill(): Promise<void>;
}

/** Polls until `check` holds: a condition wait with a deadline, never a fixed sleep. */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function ready(adminUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${adminUrl}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

/** Starts main.ts on `configYaml` with `--fake-provider off`; deployments use FAKE_PROVIDER_KEY. */
export async function spawnGateway(configYaml: string, args: string[] = []): Promise<GatewayProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-proc-'));
  const configFile = join(dir, 'gantry.yaml');
  await writeFile(configFile, configYaml);
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [
      ...NODE_ARGS,
      ...['--config', configFile, '--host', HOST, '--port', String(port)],
      ...['--admin-host', HOST, '--admin-port', String(adminPort), '--fake-provider', 'off'],
      ...['--log-level', 'warn', ...args],
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, FAKE_PROVIDER_KEY: 'sk-fake' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString('utf8')).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      process.off('exit', killOnExit);
      resolve(code);
    }),
  );
  let dead = false;
  void exited.then(() => (dead = true));
  const adminUrl = `http://${HOST}:${adminPort}`;
  await until(async () => {
    if (dead) throw new Error(`gantry exited during start:\n${out}`);
    return ready(adminUrl);
  }, 30_000);
  return {
    url: `http://${HOST}:${port}`,
    adminUrl,
    port,
    child,
    exited,
    output: () => out,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A raw TCP client that records what it receives and when the server closed it. */
export interface RawClient {
  socket: Socket;
  data(): string;
  /** Resolves when the server closes (or resets) the connection, with ms since connecting. */
  closed: Promise<number>;
}

export function rawConnect(port: number, initial: string): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, HOST);
    let received = '';
    socket.on('data', (d) => (received += d.toString('utf8')));
    // A reset is also the server closing; the test looks at what arrived before it.
    socket.on('error', () => undefined);
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now() - started)));
    socket.once('connect', () => {
      socket.write(initial);
      resolve({ socket, data: () => received, closed });
    });
    socket.once('error', reject);
  });
}
