/**
 * A real Milvus Lite server for tests. Milvus Lite 3 is a pure-Python engine that ships a
 * gRPC server speaking the Milvus protocol: `python -m milvus_lite server --data-dir D
 * --host H --port P` (the `milvus-lite` console script; it needs `pymilvus` for the
 * protocol stubs). The harness finds a Python that has both, installs them when none has
 * (pip into the current Python, or a private venv where the system Python refuses), starts
 * the server on a free loopback port with a fresh data directory, waits until it answers a
 * health check, and stops it (and removes the directory) on demand.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MilvusClient } from '@zilliz/milvus2-sdk-node';
import { HOST, startServerProcess, type ServerProcess } from './server-process.ts';

/** Env var through which the shared server's address reaches test workers. */
export const MILVUS_ADDRESS_ENV = 'GANTRY_TEST_MILVUS_ADDRESS';
/** Set to a Python executable to use that one (it must have milvus-lite >= 3 and pymilvus). */
export const MILVUS_PYTHON_ENV = 'GANTRY_MILVUS_PYTHON';

/** Pinned: the versions the suites were written against. */
export const MILVUS_LITE_REQUIREMENTS = ['milvus-lite==3.2.2', 'pymilvus==3.0.2'];

const START_TIMEOUT_MS = 60_000;
const VENV_DIR = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gantry', 'milvus-lite-venv');

/**
 * A private Milvus Lite server. restart() comes back on the same port, so clients holding the
 * address reconnect to it, with no data; stop() also removes the data.
 */
export interface MilvusInstance extends ServerProcess {
  /** `host:port`, what MilvusClient takes. */
  readonly address: string;
}

function run(cmd: string, args: string[], timeoutMs = 600_000): { ok: boolean; output: string } {
  const res = spawnSync(cmd, args, {
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', PIP_DISABLE_PIP_VERSION_CHECK: '1' },
  });
  return {
    ok: res.status === 0,
    output: `${res.stdout ?? ''}${res.stderr ?? ''}${res.error?.message ?? ''}`,
  };
}

/** Both packages importable and milvus-lite new enough to have the server (a fast check: nothing is imported). */
const PROBE = [
  '-c',
  [
    'import importlib.util as u, importlib.metadata as m',
    "ok = u.find_spec('milvus_lite') is not None and u.find_spec('pymilvus') is not None",
    "ok = ok and int(m.version('milvus-lite').split('.')[0]) >= 3",
    'raise SystemExit(0 if ok else 1)',
  ].join('\n'),
];

function hasMilvusLite(python: string): boolean {
  return run(python, PROBE, 30_000).ok;
}

function candidates(): string[] {
  const list = [process.env[MILVUS_PYTHON_ENV], join(VENV_DIR, 'bin', 'python'), 'python3', 'python'];
  return list.filter((p): p is string => typeof p === 'string' && p !== '');
}

/** A Python that can run the Milvus Lite server, if one exists. */
export function findMilvusPython(): string | undefined {
  return candidates().find((p) => (p.includes('/') ? existsSync(p) : true) && hasMilvusLite(p));
}

function systemPython(): string {
  for (const p of ['python3', 'python']) if (run(p, ['--version'], 10_000).ok) return p;
  const apt = process.getuid?.() === 0 ? ['apt-get'] : ['sudo', '-n', 'apt-get'];
  const [cmd, ...rest] = apt as [string, ...string[]];
  run(cmd, [...rest, '-o', 'DPkg::Lock::Timeout=300', 'update']);
  const res = run(cmd, [
    ...rest,
    '-o',
    'DPkg::Lock::Timeout=300',
    'install',
    '-y',
    '--no-install-recommends',
    'python3',
    'python3-venv',
  ]);
  if (!res.ok) throw new Error(`no Python and apt-get could not install one:\n${res.output}`);
  return 'python3';
}

function pipInstall(python: string): { ok: boolean; output: string } {
  return run(python, ['-m', 'pip', 'install', '--quiet', ...MILVUS_LITE_REQUIREMENTS]);
}

/**
 * Returns a Python able to run the Milvus Lite server, installing milvus-lite and pymilvus
 * when none is. Instant when already installed. Order: the current Python (pip install);
 * where that is refused (a Debian system Python is "externally managed"), a private venv.
 */
export function ensureMilvusLite(): string {
  const found = findMilvusPython();
  if (found) return found;
  const python = systemPython();
  const direct = pipInstall(python);
  if (direct.ok && hasMilvusLite(python)) return python;

  const venvPython = join(VENV_DIR, 'bin', 'python');
  if (!existsSync(venvPython)) {
    mkdirSync(join(VENV_DIR, '..'), { recursive: true });
    let venv = run(python, ['-m', 'venv', VENV_DIR]);
    if (!venv.ok) {
      // Debian splits venv support out of python3.
      const apt = process.getuid?.() === 0 ? ['apt-get'] : ['sudo', '-n', 'apt-get'];
      const [cmd, ...rest] = apt as [string, ...string[]];
      run(cmd, [
        ...rest,
        '-o',
        'DPkg::Lock::Timeout=300',
        'install',
        '-y',
        '--no-install-recommends',
        'python3-venv',
      ]);
      rmSync(VENV_DIR, { recursive: true, force: true });
      venv = run(python, ['-m', 'venv', VENV_DIR]);
      if (!venv.ok) throw new Error(`cannot create a venv for Milvus Lite:\n${venv.output}`);
    }
  }
  const inVenv = pipInstall(venvPython);
  if (inVenv.ok && hasMilvusLite(venvPython)) return venvPython;
  throw new Error(
    `Milvus Lite could not be installed.\npip into ${python}:\n${direct.output}\npip into ${VENV_DIR}:\n${inVenv.output}`,
  );
}

/** True when something accepts TCP connections on the port. */
function portOpen(port: number, timeoutMs = 250): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: HOST, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('error', () => done(false));
    sock.once('connect', () => done(true));
  });
}

/** One Milvus health check over gRPC (a fresh client: a reused channel backs off between reconnects). */
export async function milvusHealthy(address: string, timeoutMs = 1000): Promise<boolean> {
  const client = new MilvusClient({ address, timeout: timeoutMs, maxRetries: 0, logLevel: 'error' });
  try {
    return (await client.checkHealth()).isHealthy === true;
  } catch {
    return false;
  } finally {
    await client.closeConnection().catch(() => {});
  }
}

/**
 * Starts a private Milvus Lite server on a free loopback port (installing Milvus Lite if
 * needed). The caller owns it and must call stop(), which also removes its data.
 */
export async function startMilvus(): Promise<MilvusInstance> {
  const python = ensureMilvusLite();
  const dataDir = mkdtempSync(join(tmpdir(), 'gantry-milvus-'));
  // Each start attempt uses the same directory; a failed one may have left a LOCK, which flock releases on exit.
  const wipe = () => rmSync(dataDir, { recursive: true, force: true });
  const server = await startServerProcess({
    name: 'Milvus Lite',
    command: python,
    args: (port) => [
      '-m',
      'milvus_lite',
      'server',
      '--data-dir',
      dataDir,
      '--host',
      HOST,
      '--port',
      String(port),
    ],
    env: { PYTHONUNBUFFERED: '1' },
    healthy: async (port) => (await portOpen(port)) && (await milvusHealthy(`${HOST}:${port}`)),
    readiness: 'become healthy',
    startTimeoutMs: START_TIMEOUT_MS,
    pollMs: 50,
  }).catch((err: unknown) => {
    wipe();
    throw err;
  });
  return {
    address: `${HOST}:${server.port}`,
    port: server.port,
    get running() {
      return server.running;
    },
    async stop() {
      await server.stop();
      wipe();
    },
    async restart() {
      // A fresh, empty data directory between the old process and the new one.
      await server.stop();
      wipe();
      mkdirSync(dataDir, { recursive: true });
      await server.restart();
    },
    pause: () => server.pause(),
    resume: () => server.resume(),
  };
}

/**
 * The shared server's address inside a test worker. The globalSetup exports it through the
 * env; a run without the globalSetup fails loudly rather than skipping.
 */
export function testMilvusAddress(): string {
  const address = process.env[MILVUS_ADDRESS_ENV];
  if (!address)
    throw new Error(
      `${MILVUS_ADDRESS_ENV} is not set: run tests through vitest with test/harness/global-setup.ts`,
    );
  return address;
}
