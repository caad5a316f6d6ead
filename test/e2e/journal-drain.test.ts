/**
 * Shutdown during a Redis outage: charges journaled while Redis was down keep being replayed
 * for the journal drain window, so a pod whose journal directory dies with it (an emptyDir)
 * still hands them to Redis when Redis returns within the window. When it does not, the close
 * still ends at the window, logs what is owed, and leaves it in the directory, where a gateway
 * started on the same directory (a persistent volume) charges it. A real redis-server that the
 * test stops and restarts; the upstream answers only when the test opens its gate.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { pendingSettlements } from '../../dataplane/src/stores/journal/entries.ts';
import { JOURNAL_FILE } from '../../dataplane/src/stores/journal/journal.ts';
import { startGatedUpstream, type GatedUpstream } from '../harness/gated-upstream.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { apiKey, deployment, tenant } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const KEY = 'sk-test-journal-drain';
const BUDGET = { limitUsd: 5, period: 'monthly' } as const;
const KEY_REF = { tenant: 'acme', keyId: 'default/k' };
const PRICE = { inputPerMillionTokens: 100, outputPerMillionTokens: 200 };
/** The gated upstream's fixed usage, 10 prompt + 20 completion tokens, at PRICE. */
const COST = (10 * 100 + 20 * 200) / 1e6;

let redis: RedisInstance;
let gated: GatedUpstream;
let dir: string;
let configFile: string;
let logs: LogLine[];
let gateway: Gateway | undefined;

const boot = (journalDir: string, journalDrainMs: number) =>
  startGateway({
    configFile,
    env: { FAKE_PROVIDER_KEY: 'k' },
    watch: false,
    redisUrl: redis.url,
    redisPrefix: 'journal-drain',
    drainTimeoutMs: 200,
    journalDir,
    journalRetryMs: 50,
    journalDrainMs,
    logger: { level: 'info', stream: logSink(logs) },
  });

beforeAll(async () => {
  [redis, gated] = await Promise.all([startRedis(), startGatedUpstream()]);
  dir = await mkdtemp(join(tmpdir(), 'gantry-journal-drain-'));
  configFile = join(dir, 'gantry.yaml');
  await writeFile(
    configFile,
    [
      deployment({ name: 'g', model: 'g', baseUrl: gated.url, pricing: PRICE }),
      tenant('acme'),
      apiKey('k', KEY, 'acme', { budget: BUDGET }),
    ].join(''),
  );
});
beforeEach(async () => {
  logs = [];
  await redis.restart(); // each test starts from an empty budget
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});
afterAll(async () => {
  await Promise.all([gated.close(), redis.stop()]);
  await rm(dir, { recursive: true, force: true });
});

/** Answers `n` requests whose budgets were held before Redis stopped: their charges are journaled. */
async function spendDuringOutage(gw: Gateway, n: number): Promise<void> {
  const requests = Array.from({ length: n }, () =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'g', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
    }),
  );
  await gated.waiting(n);
  await redis.stop();
  gated.open();
  for (const res of await Promise.all(requests)) expect(res.status).toBe(200);
  await until('the charges journaled', async () => (gw.journal?.pending === n ? true : undefined));
}

const owedInFile = async (journalDir: string) =>
  pendingSettlements(await readFile(join(journalDir, JOURNAL_FILE), 'utf8').catch(() => ''));

/** What a new pod reading Redis sees spent; its own journal directory is empty (a fresh emptyDir). */
async function spentSeenByNewPod(): Promise<number> {
  gateway = await boot(await mkdtemp(join(dir, 'fresh-')), 0);
  return (await gateway.stores.budgets.state(KEY_REF, BUDGET)).spentUsd;
}

const logged = (msg: string) => logs.find((l) => l.msg.startsWith(msg));

describe('the journal drain on shutdown', () => {
  it('replays journaled charges while Redis comes back within the window, so a pod that loses its directory loses nothing', async () => {
    const journalDir = await mkdtemp(join(dir, 'pod-'));
    const pod = await boot(journalDir, 60_000);
    await spendDuringOutage(pod, 2);

    const closed = pod.close();
    // Lockstep: Redis returns only once the shutdown is waiting on the journal.
    await until('the journal drain', async () =>
      logged('replaying journaled settlements before exit') ? true : undefined,
    );
    expect(logged('replaying journaled settlements before exit')).toMatchObject({
      pending: 2,
      withinMs: 60_000,
    });
    await redis.restart();
    await closed;

    expect(logged('journaled settlements applied before exit')).toBeDefined();
    expect(logged('exiting with journaled settlements unapplied')).toBeUndefined();
    expect(await owedInFile(journalDir)).toEqual([]);
    // The pod's directory is gone with it; Redis alone has the spend.
    await rm(journalDir, { recursive: true, force: true });
    expect(await spentSeenByNewPod()).toBeCloseTo(2 * COST, 9);
  });

  it('ends at the window with Redis still down: what is owed is logged and stays in the directory for the next gateway on it', async () => {
    const journalDir = await mkdtemp(join(dir, 'pod-'));
    const pod = await boot(journalDir, 300);
    await spendDuringOutage(pod, 3);

    await pod.close();
    const left = logged('exiting with journaled settlements unapplied');
    expect(left).toMatchObject({ level: 50, pending: 3, journalDir });
    expect(Math.round((left!.owedUsd as number) * 1e6)).toBe(Math.round(3 * COST * 1e6));
    expect((left!.settlements as { keyId: string; amountUsd: number }[]).map((s) => s.keyId)).toEqual([
      'default/k',
      'default/k',
      'default/k',
    ]);
    expect(await owedInFile(journalDir)).toHaveLength(3);

    // A gateway on the same directory (a persistent volume, or the same pod's container restart) charges it.
    await redis.restart();
    gateway = await boot(journalDir, 0);
    expect(gateway.journal?.pending).toBe(0);
    expect((await gateway.stores.budgets.state(KEY_REF, BUDGET)).spentUsd).toBeCloseTo(3 * COST, 9);
  });

  it('without a window (the embedded default) the close does not wait for Redis', async () => {
    const journalDir = await mkdtemp(join(dir, 'pod-'));
    const pod = await boot(journalDir, 0);
    await spendDuringOutage(pod, 1);
    await pod.close();
    expect(logged('replaying journaled settlements before exit')).toBeUndefined();
    expect(logged('exiting with journaled settlements unapplied')).toMatchObject({ pending: 1 });
    expect(await owedInFile(journalDir)).toHaveLength(1);
  });
});
