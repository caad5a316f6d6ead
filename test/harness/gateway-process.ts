/**
 * Gantry as its own process, started the way `npm run dev` starts it (dataplane/src/main.ts
 * under tsx) with the built-in fake provider, on a config written to a temp dir. Its stdout
 * (pino's JSON lines) is kept, so tests can read every log line of the run.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, HOST } from './server-process.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

export interface GatewayProcess {
  url: string;
  adminUrl: string;
  /** Every complete line the gateway wrote to stdout so far. */
  stdoutLines(): string[];
  /**
   * Resolves once the lines written so far satisfy `done` (the gateway writes its log
   * asynchronously, so a request's line can follow its answer); rejects after `timeoutMs`.
   */
  waitForLines(done: (lines: string[]) => boolean, timeoutMs?: number): Promise<string[]>;
  stop(): Promise<void>;
  /** Resolves with the process's exit code once it has exited by itself or been stopped. */
  exitCode: Promise<number | null>;
}

export async function startGatewayProcess(
  config: string,
  env: Record<string, string> = {},
): Promise<GatewayProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-proc-'));
  const configFile = join(dir, 'gantry.yaml');
  await writeFile(configFile, config);
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'dataplane/src/main.ts',
      '--config',
      configFile,
      '--host',
      HOST,
      '--port',
      String(port),
      '--admin-host',
      HOST,
      '--admin-port',
      String(adminPort),
      '--fake-provider',
      'auto',
      // stop() sends SIGTERM: no load balancer to wait for, so no pre-stop window.
      '--pre-stop-ms',
      '0',
    ],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const exitCode = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const exited = exitCode.then(() => undefined);
  let dead = false;
  void exited.then(() => (dead = true));

  const stop = async () => {
    if (!dead) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    process.off('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
  };

  const adminUrl = `http://${HOST}:${adminPort}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (dead) throw new Error(`gantry exited during start:\n${stderr}\n${stdout.slice(-2000)}`);
    const ready = await fetch(`${adminUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`gantry was not ready within ${START_TIMEOUT_MS} ms:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const stdoutLines = () => stdout.split('\n').slice(0, -1);
  const waitForLines = (done: (lines: string[]) => boolean, timeoutMs = 10_000) =>
    new Promise<string[]>((resolve, reject) => {
      const check = () => {
        const lines = stdoutLines();
        if (!done(lines)) return;
        finish();
        resolve(lines);
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `gantry's stdout did not reach the expected lines within ${timeoutMs} ms (${stdoutLines().length} lines)`,
          ),
        );
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        child.stdout.off('data', check);
      };
      child.stdout.on('data', check);
      check();
    });
  return { url: `http://${HOST}:${port}`, adminUrl, stdoutLines, waitForLines, stop, exitCode };
}
