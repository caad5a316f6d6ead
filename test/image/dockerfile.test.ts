/**
 * Docker cannot run here, so the Dockerfile's steps run as a script: each stage gets its own
 * root folder in a clean temp directory, COPY takes files from the repository (minus what
 * .dockerignore leaves out) or from an earlier stage, RUN runs in the stage's WORKDIR. A
 * broken step fails this test; the final stage must then start and serve.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLED_ASSETS } from '../../dataplane/src/assets.ts';
import { freePort } from '../harness/server-process.ts';
import { dockerIgnored, parseDockerignore } from './dockerignore.ts';

// Async, so the test worker's event loop keeps answering vitest while npm ci runs.
const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'gantry-image-'));

interface Stage {
  name: string;
  root: string;
  cwd: string;
  env: Record<string, string>;
  cmd: string[];
  entrypoint: string[];
  user?: string;
}

const ignored = parseDockerignore(readFileSync(join(repo, '.dockerignore'), 'utf8'));
// As Docker matches: the path relative to the build context, not the file's name.
const keep = (src: string) => !dockerIgnored(ignored, relative(repo, src).split(sep).join('/'));

async function runDockerfile(): Promise<Stage[]> {
  const lines = readFileSync(join(repo, 'Dockerfile'), 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  const inStage = (p: string) => (p.startsWith('/') ? join(stage!.root, p) : join(stage!.cwd, p));
  for (const line of lines) {
    const [op, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    switch (op) {
      case 'FROM': {
        const name = /\sAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.length}`;
        const root = join(work, name);
        mkdirSync(root, { recursive: true });
        stage = { name, root, cwd: root, env: {}, cmd: [], entrypoint: [] };
        stages.push(stage);
        break;
      }
      case 'WORKDIR':
        stage!.cwd = inStage(args);
        mkdirSync(stage!.cwd, { recursive: true });
        break;
      case 'ENV': {
        const [k, v] = args.split('=');
        stage!.env[k!] = v!;
        break;
      }
      case 'COPY': {
        const parts = rest.filter((p) => !p.startsWith('--'));
        const from = /--from=(\S+)/.exec(args)?.[1];
        const dest = parts.pop()!;
        const source = from ? stages.find((s) => s.name === from)! : undefined;
        for (const src of parts) {
          const path = source ? join(source.root, src) : join(repo, src);
          const target =
            dest.endsWith('/') || parts.length > 1 ? join(inStage(dest), basename(src)) : inStage(dest);
          // Async: a synchronous copy of node_modules blocks the worker past vitest's 60 s RPC timeout.
          await cp(path, target, { recursive: true, filter: source ? undefined : keep });
        }
        break;
      }
      case 'RUN':
        await run('bash', ['-euo', 'pipefail', '-c', args], {
          cwd: stage!.cwd,
          env: { ...process.env, ...stage!.env },
          maxBuffer: 64 * 1024 * 1024,
          timeout: 300_000,
        });
        break;
      case 'CMD':
        stage!.cmd = JSON.parse(args) as string[];
        break;
      case 'ENTRYPOINT':
        stage!.entrypoint = JSON.parse(args) as string[];
        break;
      case 'USER':
        stage!.user = args;
        break;
      case 'EXPOSE':
        break;
      default:
        throw new Error(`Dockerfile instruction not understood by this test: ${op}`);
    }
  }
  return stages;
}

// Removing a production install's node_modules can pass the 60 s hook default on a loaded machine,
// and done synchronously it blocks the worker past vitest's 60 s RPC timeout (an unhandled error).
afterAll(() => rm(work, { recursive: true, force: true }), 300_000);

describe('Dockerfile', () => {
  let final: Stage;

  it('every build step succeeds in a clean directory', async () => {
    const stages = await runDockerfile();
    final = stages.at(-1)!;
    expect(existsSync(join(final.cwd, 'dataplane/dist/gantry.mjs'))).toBe(true);
    expect(existsSync(join(final.cwd, 'operator/dist/operator.mjs'))).toBe(true);
    // The default cache embedder's weights, where the bundle looks for them.
    expect(existsSync(join(final.cwd, 'models/minilm/encoder.int8.onnx'))).toBe(true);
    // The files the bundle loads before it listens, beside it (dataplane/src is not in the image).
    for (const asset of BUNDLED_ASSETS)
      expect(existsSync(join(final.cwd, 'dataplane/dist', asset)), asset).toBe(true);
  }, 600_000);

  it('the runtime image holds production dependencies only and runs as non-root', () => {
    for (const dev of ['vitest', 'typescript', 'eslint', 'tsx', 'openai'])
      expect(existsSync(join(final.cwd, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(join(final.cwd, 'node_modules', 'fastify'))).toBe(true);
    expect(final.user).toBe('1000:1000');
    expect(existsSync(join(final.cwd, 'dataplane/src'))).toBe(false);
  });

  it('the operator entry point starts', async () => {
    const { stdout } = await run(
      'node',
      [...final.entrypoint.slice(1), 'operator/dist/operator.mjs', '--help'],
      {
        cwd: final.cwd,
      },
    );
    expect(stdout).toContain('gantry-operator');
  });

  it('the default command serves the example config offline', async () => {
    const [port, admin] = [await freePort(), await freePort()];
    const child = spawn(
      'node',
      [...final.entrypoint.slice(1), ...final.cmd, '--port', String(port), '--admin-port', String(admin)],
      {
        cwd: final.cwd,
        env: { ...process.env, ...final.env, GANTRY_HOST: '127.0.0.1', GANTRY_ADMIN_HOST: '127.0.0.1' },
        stdio: 'ignore',
      },
    );
    try {
      const deadline = Date.now() + 30_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = await fetch(`http://127.0.0.1:${admin}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
