/**
 * A kube-apiserver and etcd of this test file alone (no controller-manager), from the binaries
 * scripts/ensure-kube.sh built. The shared script keeps its certificates, etcd data and PID
 * files under KAS_HOME, so a second instance beside the operator e2e's needs its own KAS_HOME:
 * a temporary one whose bin/ links to the built binaries.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findKubeScript, type KubeInstance } from './kube.ts';
import { freePort } from './server-process.ts';

const run = promisify(execFile);
const BINARIES = ['etcd', 'kube-apiserver'];

export async function startPrivateKube(): Promise<KubeInstance> {
  const script = findKubeScript();
  const built = join(
    process.env.KAS_HOME ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gantry-kube'),
    'bin',
  );
  if (!BINARIES.every((name) => existsSync(join(built, name))))
    await run('bash', [script, 'build'], { maxBuffer: 64 * 1024 * 1024, timeout: 45 * 60_000 });
  const home = await mkdtemp(join(tmpdir(), 'gantry-kas-'));
  await mkdir(join(home, 'bin'));
  for (const name of BINARIES) await symlink(join(built, name), join(home, 'bin', name));
  const env = {
    ...process.env,
    KAS_HOME: home,
    WITH_KCM: '0',
    KAS_PORT: String(await freePort()),
    ETCD_PORT: String(await freePort()),
    ETCD_PEER_PORT: String(await freePort()),
    ETCD_EXTRA_ARGS: '--unsafe-no-fsync',
  };
  await run('bash', [script, 'start'], { env, maxBuffer: 16 * 1024 * 1024, timeout: 180_000 });
  return {
    kubeconfig: join(home, 'run', 'kubeconfig'),
    stop: async () => {
      await run('bash', [script, 'stop'], { env, timeout: 60_000 });
      await rm(home, { recursive: true, force: true });
    },
  };
}
