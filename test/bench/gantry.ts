import { execFile } from 'node:child_process';
/**
 * Gantry as a child process, started the way `npm start` starts it (dataplane/src/main.ts
 * under tsx), on a standalone config written to a temp file: one OpenAI deployment on the
 * fake upstream, one tenant, one key. Pinned to the gateway core.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_FLAGS } from '../../dataplane/src/node-flags.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';
import { freePort, waitForHttp } from './procs.ts';
import type { BenchContext } from './section.ts';
import type { Target } from './target.ts';
import { UPSTREAM_KEY } from './upstream.ts';

const CLIENT_KEY = 'sk-gantry-bench';

export function benchConfig(upstreamUrl: string): string {
  return [
    deployment({
      name: 'bench-openai',
      model: 'gpt-4o-mini',
      baseUrl: fakeBase(upstreamUrl),
      capabilities: ['chat', 'streaming'],
    }),
    tenant('bench'),
    apiKey('bench-key', CLIENT_KEY, 'bench'),
  ].join('');
}

/** What a section may change about the Gantry child; proxy-overhead uses the defaults. */
export interface GantrySetup {
  /** Manifests to serve instead of `benchConfig`'s (the target's headers keep its key). */
  config?: string;
  /** Added to the child's environment, e.g. GANTRY_REDIS_URL. */
  env?: Record<string, string>;
  /** Said after the label, e.g. "Redis stores". */
  describe?: string;
}

const nodeFlags = (ctx: BenchContext): readonly string[] => ctx.options.gantryNodeFlags ?? NODE_FLAGS;

export async function startGantry(
  ctx: BenchContext,
  upstreamUrl: string,
  setup: GantrySetup = {},
): Promise<Target & { profileDir?: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-'));
  const configFile = join(dir, 'gantry.yaml');
  await writeFile(configFile, setup.config ?? benchConfig(upstreamUrl));
  const [port, adminPort] = [await freePort(), await freePort()];

  const profileDir = ctx.options.cpuProfile ? join(ctx.scratchDir, 'profiles') : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const root = ctx.options.gantryDir ?? ctx.repoRoot;
  const startedAtMs = Date.now();
  const child = ctx.processes.start({
    name: 'gantry',
    command: process.execPath,
    args: [
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      // The flags `npm start`, the image and the chart use, unless a run compares others.
      ...nodeFlags(ctx),
      await builtEntry(root),
      '--config',
      configFile,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--admin-host',
      '127.0.0.1',
      '--admin-port',
      String(adminPort),
      '--fake-provider',
      'off',
      // The bench stops it when done: no load balancer to wait for, and a profile is written
      // only by a clean exit before the process group's SIGKILL grace runs out.
      '--pre-stop-ms',
      '0',
    ],
    cwd: root,
    // The deployment's apiKeyEnv (the harness names it FAKE_PROVIDER_KEY) is set here only.
    env: {
      ...process.env,
      FAKE_PROVIDER_KEY: UPSTREAM_KEY,
      // As `npm start` and the image set it.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      GANTRY_LOG_LEVEL: ctx.options.gantryLogLevel,
      ...setup.env,
    },
    cores: ctx.cpus.gatewayCores,
  });
  try {
    await waitForHttp(child, `http://127.0.0.1:${adminPort}/readyz`, (s) => s === 200);
  } catch (err) {
    await child.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    name: 'gantry',
    label: `Gantry${ctx.options.gantryDir ? ` from ${root}` : ''} (GANTRY_LOG_LEVEL=${setup.env?.GANTRY_LOG_LEVEL ?? ctx.options.gantryLogLevel}${ctx.options.gantryNodeFlags ? `; node ${ctx.options.gantryNodeFlags.join(' ')}` : ''}${setup.describe ? `; ${setup.describe}` : ''})`,
    origin: `http://127.0.0.1:${port}`,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEY}` },
    child,
    startedAtMs,
    ...(profileDir && { profileDir }),
    async stop() {
      await child.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `npm start` runs the bundle `npm run build` makes: build it once per bench and checkout (a
 * run may compare two checkouts), run it the same way.
 */
const built = new Map<string, Promise<string>>();
function builtEntry(root: string): Promise<string> {
  let entry = built.get(root);
  if (!entry) {
    entry = new Promise((resolve, reject) => {
      execFile('npm', ['run', 'build', '--silent'], { cwd: root }, (err) =>
        err ? reject(err) : resolve(join(root, 'dataplane/dist/gantry.mjs')),
      );
    });
    built.set(root, entry);
  }
  return entry;
}
