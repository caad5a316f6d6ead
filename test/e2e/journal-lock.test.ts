/**
 * Two gateways on one journal directory (two pods on a ReadWriteMany volume, or one host with
 * the same --journal-dir twice) would both replay and truncate the same files. The second is
 * refused while the first holds the directory, starts once the first has shut down (its close
 * releases the lock), and a gateway that loses the lock while serving says so at error level
 * and reports it to its embedder (the command line exits). Real redis-server, real filesystem.
 */
import { mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway, type GatewayOptions } from '../../dataplane/src/gateway.ts';
import { JournalLockedError, LOCK_NAME } from '../../dataplane/src/stores/journal/lock.ts';
import { startGatewayProcess } from '../harness/gateway-process.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { deployment } from '../harness/stack.ts';

let dir: string;
let configFile: string;
const gateways: Gateway[] = [];

const boot = async (journalDir: string, extra: Partial<GatewayOptions> = {}) => {
  const gw = await startGateway({
    configFile,
    env: { FAKE_PROVIDER_KEY: 'k' },
    watch: false,
    redisUrl: testRedisUrl(),
    redisPrefix: 'journal-lock',
    drainTimeoutMs: 200,
    journalDir,
    journalLock: { staleMs: 2000, updateMs: 1000, waitMs: 0 },
    logger: { level: 'silent' },
    ...extra,
  });
  gateways.push(gw);
  return gw;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gantry-journal-lock-e2e-'));
  configFile = join(dir, 'gantry.yaml');
  await writeFile(configFile, deployment({ name: 'g', model: 'g', baseUrl: 'http://127.0.0.1:9/v1' }));
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('one gateway per journal directory', () => {
  it('refuses a second gateway on a held directory, naming it, and starts it once the first has shut down', async () => {
    const journalDir = await mkdtemp(join(dir, 'pod-'));
    const first = await boot(journalDir);
    const refused = await boot(journalDir).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JournalLockedError);
    expect((refused as Error).message).toContain(journalDir);
    expect((refused as Error).message).toContain(`pid ${process.pid}`);

    await first.close();
    gateways.splice(gateways.indexOf(first), 1);
    const second = await boot(journalDir);
    expect(second.journal?.dir).toBe(journalDir);
  });

  it('a start that fails on a taken port releases the directory, so a retry in the same process starts', async () => {
    const journalDir = await mkdtemp(join(dir, 'port-'));
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      await expect(boot(journalDir, { port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
    expect((await boot(journalDir)).url).toMatch(/^http:/);
  });

  it('a gateway that loses the lock while serving logs it at error and tells its embedder', async () => {
    const journalDir = await mkdtemp(join(dir, 'pod-'));
    const logs: LogLine[] = [];
    let reported!: (err: Error) => void;
    const lost = new Promise<Error>((resolve) => (reported = resolve));
    await boot(journalDir, {
      logger: { level: 'info', stream: logSink(logs) },
      onJournalLockLost: (err) => reported(err),
    });
    await rmdir(join(journalDir, LOCK_NAME)); // as if another process had taken it over
    await lost;
    const line = logs.find((l) => l.msg.startsWith('settlement journal lock lost'));
    expect(line).toMatchObject({ level: 50, journalDir, pending: 0 });
  });

  it('the command line exits 1 when its journal lock is lost while serving, saying so at error', async () => {
    const journalDir = await mkdtemp(join(dir, 'cli-'));
    const proc = await startGatewayProcess(
      deployment({ name: 'g', model: 'g', baseUrl: 'http://127.0.0.1:9/v1' }),
      {
        GANTRY_REDIS_URL: testRedisUrl(),
        GANTRY_JOURNAL_DIR: journalDir,
      },
    );
    try {
      await rmdir(join(journalDir, LOCK_NAME)); // noticed at its next refresh (within 5 s)
      expect(await proc.exitCode).toBe(1);
      const line = proc.stdoutLines().find((l) => l.includes('settlement journal lock lost'));
      expect(JSON.parse(line!)).toMatchObject({ level: 50, journalDir });
    } finally {
      await proc.stop();
    }
  });
});
