/**
 * The floor target of proxy-overhead: `floor-proxy.ts` on the gateway core, called like the
 * upstream (it passes the caller's Bearer key on).
 */
import { join } from 'node:path';
import { freePort, waitForHttp } from './procs.ts';
import type { BenchContext } from './section.ts';
import type { Target } from './target.ts';
import { UPSTREAM_KEY } from './upstream.ts';

export async function startFloor(ctx: BenchContext, upstreamUrl: string): Promise<Target> {
  const port = await freePort();
  const startedAtMs = Date.now();
  const child = ctx.processes.start({
    name: 'floor proxy',
    command: process.execPath,
    args: ['--import', 'tsx', join(ctx.repoRoot, 'test/bench/floor-proxy.ts'), String(port), upstreamUrl],
    cwd: ctx.repoRoot,
    env: { ...process.env },
    cores: ctx.cpus.gatewayCores,
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(child, `${origin}/`, (s) => s === 200);
  return {
    name: 'floor',
    label: 'minimal Node proxy (node:http + undici Pool, no work)',
    origin,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` },
    child,
    startedAtMs,
    stop: () => child.stop(),
  };
}
