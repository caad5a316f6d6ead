/**
 * A real kube-apiserver, etcd and kube-controller-manager for the operator's end-to-end
 * tests, run by the shared script (`shared/k8s/kube-apiserver.sh`) beside the repository.
 * `scripts/ensure-kube.sh` builds them before the suite (cold once, cached after); this
 * module starts them on free loopback ports and stops them.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './server-process.ts';

const run = promisify(execFile);

/** The shared script: in `shared/k8s/` of the repository's folder or of any folder above it. */
export function findKubeScript(): string {
  if (process.env.GANTRY_KUBE_SCRIPT) return process.env.GANTRY_KUBE_SCRIPT;
  let dir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  for (;;) {
    const candidate = join(dir, 'shared', 'k8s', 'kube-apiserver.sh');
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) throw new Error('shared/k8s/kube-apiserver.sh not found above the repository');
    dir = up;
  }
}

export interface KubeInstance {
  kubeconfig: string;
  stop(): Promise<void>;
}

export async function startKube(): Promise<KubeInstance> {
  const script = findKubeScript();
  const env = {
    ...process.env,
    KAS_PORT: String(await freePort()),
    ETCD_PORT: String(await freePort()),
    ETCD_PEER_PORT: String(await freePort()),
    ETCD_EXTRA_ARGS: '--unsafe-no-fsync',
  };
  // Builds first when the binaries are missing (scripts/ensure-kube.sh normally did it).
  await run('bash', [script, 'build'], { env, maxBuffer: 64 * 1024 * 1024, timeout: 45 * 60_000 });
  await run('bash', [script, 'start'], { env, maxBuffer: 16 * 1024 * 1024, timeout: 180_000 });
  const { stdout } = await run('bash', [script, 'env'], { env });
  const kubeconfig = /KUBECONFIG=(\S+)/.exec(stdout)?.[1];
  if (!kubeconfig) throw new Error(`no kubeconfig in: ${stdout}`);
  return {
    kubeconfig,
    stop: async () => {
      await run('bash', [script, 'stop'], { env, timeout: 60_000 });
    },
  };
}
