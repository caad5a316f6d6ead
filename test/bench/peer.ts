/**
 * The peer: @portkey-ai/gateway from npm, installed into a scratch folder outside the
 * workspaces (.bench/portkey/) with its @hono/node-server pinned to 1.14.1 (newer versions
 * break its streaming with a 500). Started from its package `bin` with its own
 * `--port=` flag and `--headless` (no UI), pinned to the gateway core, and called with its
 * provider headers: x-portkey-provider, x-portkey-custom-host and the provider key as Bearer.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitForHttp } from './procs.ts';
import type { BenchContext } from './section.ts';
import type { Target } from './target.ts';
import { UPSTREAM_KEY } from './upstream.ts';

const PACKAGE = '@portkey-ai/gateway';
const NODE_SERVER = '@hono/node-server';
const NODE_SERVER_PIN = '1.14.1';
const INSTALL_TIMEOUT_MS = 180_000;

export type PeerInstall =
  { ok: true; dir: string; entry: string; version: string } | { ok: false; reason: string };

async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The script its package.json `bin` names (a string, or the first entry of an object). */
export function binOf(pkg: Record<string, unknown>): string | undefined {
  const bin = pkg.bin;
  if (typeof bin === 'string') return bin;
  if (bin && typeof bin === 'object') {
    const first = Object.values(bin as Record<string, unknown>)[0];
    if (typeof first === 'string') return first;
  }
  return undefined;
}

/** Written after an install succeeds: package.json alone may belong to a failed attempt. */
const MARKER = 'installed-manifest.json';

/** What is installed in `dir`, if an install of exactly this manifest succeeded there. */
async function installed(dir: string, manifest: string): Promise<PeerInstall | undefined> {
  const current = await readFile(join(dir, MARKER), 'utf8').catch(() => '');
  if (current !== manifest) return undefined;
  const pkg = await readJson(join(dir, 'node_modules', PACKAGE, 'package.json'));
  const server = await readJson(join(dir, 'node_modules', NODE_SERVER, 'package.json'));
  const bin = pkg && binOf(pkg);
  if (!pkg || !bin || server?.version !== NODE_SERVER_PIN) return undefined;
  return { ok: true, dir, entry: join(dir, 'node_modules', PACKAGE, bin), version: String(pkg.version) };
}

/** Installs the peer (or reuses an earlier install); never throws: offline is a reason, not a failure. */
export async function installPeer(ctx: BenchContext): Promise<PeerInstall> {
  const dir = join(ctx.scratchDir, 'portkey');
  const manifest = `${JSON.stringify(
    {
      name: 'gantry-bench-peer',
      private: true,
      dependencies: { [PACKAGE]: ctx.options.peerVersion },
      overrides: { [NODE_SERVER]: NODE_SERVER_PIN },
    },
    null,
    2,
  )}\n`;
  const ready = await installed(dir, manifest);
  if (ready) return ready;
  try {
    await mkdir(dir, { recursive: true });
    await rm(join(dir, MARKER), { force: true });
    await writeFile(join(dir, 'package.json'), manifest);
    ctx.log(`installing ${PACKAGE}@${ctx.options.peerVersion} into ${dir} ...`);
    // No install scripts: its postinstall runs patch-package for its own repo, not for us.
    await promisify(execFile)(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--omit=dev',
        '--no-package-lock',
        '--loglevel=error',
      ],
      { cwd: dir, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
    );
    await writeFile(join(dir, MARKER), manifest);
  } catch (err) {
    const e = err as Error & { stderr?: string };
    // npm's first two error lines say what went wrong (code ENOTFOUND / ETARGET, then the
    // message); the rest is advice and a log path.
    const npmLines = (e.stderr ?? '')
      .split('\n')
      .filter((l) => l.startsWith('npm error'))
      .slice(0, 2)
      .map((l) => l.replace(/^npm error\s*/, ''));
    const detail = npmLines.join('; ') || e.message.split('\n')[0];
    return { ok: false, reason: `npm install ${PACKAGE} failed: ${detail}` };
  }
  return (
    (await installed(dir, manifest)) ?? {
      ok: false,
      reason: `${PACKAGE} installed but its bin or pin is missing`,
    }
  );
}

export async function startPeer(
  ctx: BenchContext,
  peer: Extract<PeerInstall, { ok: true }>,
  upstreamUrl: string,
): Promise<Target> {
  const port = await freePort();
  const child = ctx.processes.start({
    name: 'portkey gateway',
    command: process.execPath,
    args: [peer.entry, `--port=${port}`, '--headless'],
    cwd: peer.dir,
    env: { ...process.env },
    cores: ctx.cpus.gatewayCores,
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(child, `${origin}/`);
  return {
    name: 'peer',
    label: `Portkey gateway ${peer.version} (${NODE_SERVER} ${NODE_SERVER_PIN})`,
    origin,
    path: '/v1/chat/completions',
    headers: {
      'content-type': 'application/json',
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${upstreamUrl}/v1`,
      authorization: `Bearer ${UPSTREAM_KEY}`,
    },
    child,
    stop: () => child.stop(),
  };
}
