/**
 * The fake provider as its own process (the project's fake, no added latency), on the
 * non-gateway cores. Every target calls this same upstream.
 */
import { join } from 'node:path';
import { request } from 'undici';
import type { BenchContext } from './section.ts';
import { freePort, waitForHttp, type Child } from './procs.ts';
import type { Target } from './target.ts';

/** Any non-empty key satisfies the fake; gateways pass it on as the provider key. */
export const UPSTREAM_KEY = 'sk-bench-upstream';

export interface Upstream {
  url: string;
  child: Child;
  /** Forget recorded requests, so the fake's memory does not grow across cells. */
  reset(): Promise<void>;
  /** Calling the fake's OpenAI endpoint directly: the baseline. */
  direct: Target;
}

export async function startUpstream(ctx: BenchContext): Promise<Upstream> {
  const port = await freePort();
  const child = ctx.processes.start({
    name: 'fake provider',
    command: process.execPath,
    args: ['--import', 'tsx', join(ctx.repoRoot, 'dataplane/src/fake-provider/main.ts')],
    cwd: ctx.repoRoot,
    env: { ...process.env, FAKE_PROVIDER_PORT: String(port), FAKE_PROVIDER_HOST: '127.0.0.1' },
    cores: ctx.cpus.otherCores,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(child, `${url}/_fake/requests`, (s) => s === 200);
  return {
    url,
    child,
    async reset() {
      const res = await request(`${url}/_fake/reset`, { method: 'POST' });
      await res.body.dump();
    },
    direct: {
      name: 'direct',
      label: 'fake upstream, called directly',
      origin: url,
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` },
      stop: async () => undefined,
    },
  };
}
