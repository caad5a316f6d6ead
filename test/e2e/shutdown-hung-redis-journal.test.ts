/**
 * Shutdown with a settlement hung on a Redis that answers nothing (SIGSTOP): once the capped
 * wait for it gives up, closing the stores cuts the hung command at once, the settlement falls
 * back to the journal, and the journal closes only after it is on disk. A gateway started on
 * the same journal directory then charges it, once. Before, the journal closed first: the
 * settlement reached it only when its command timed out, the journal refused it ('settlement
 * journal is closed') and the charge was lost, the process exiting with it only logged.
 * A real redis-server; the upstream answers only when the test opens its gate.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway } from '../../dataplane/src/gateway.ts';
import { pendingSettlements } from '../../dataplane/src/stores/journal/entries.ts';
import { JOURNAL_FILE } from '../../dataplane/src/stores/journal/journal.ts';
import { startGatedUpstream, type GatedUpstream } from '../harness/gated-upstream.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { apiKey, deployment, tenant } from '../harness/stack.ts';

const KEY = 'sk-test-hung-redis-journal';
const BUDGET = { limitUsd: 5, period: 'monthly' } as const;
const KEY_REF = { tenant: 'acme', keyId: 'default/k' };
const PRICE = { inputPerMillionTokens: 100, outputPerMillionTokens: 200 };
/** The gated upstream's fixed usage, 10 prompt + 20 completion tokens, at PRICE. */
const COST = (10 * 100 + 20 * 200) / 1e6;

let redis: RedisInstance;
let gated: GatedUpstream;
let dir: string;
let configFile: string;

const boot = (journalDir: string, logs: LogLine[]) =>
  startGateway({
    configFile,
    env: { FAKE_PROVIDER_KEY: 'k' },
    watch: false,
    redisUrl: redis.url,
    redisPrefix: 'hung',
    journalDir,
    journalDrainMs: 0,
    // Far below the store's 1 s command timeout: the wait gives up while the settlement hangs.
    storeWaitMs: 50,
    logger: { level: 'info', stream: logSink(logs) },
  });

beforeAll(async () => {
  [redis, gated] = await Promise.all([startRedis(), startGatedUpstream()]);
  dir = await mkdtemp(join(tmpdir(), 'gantry-hung-redis-'));
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
afterAll(async () => {
  redis.resume();
  await Promise.all([gated.close(), redis.stop()]);
  await rm(dir, { recursive: true, force: true });
});

it('journals a settlement hung on a paused Redis past the wait, and the next gateway on the directory charges it once', async () => {
  const journalDir = join(dir, 'journal');
  const logs: LogLine[] = [];
  const pod = await boot(journalDir, logs);
  const res = fetch(`${pod.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'g', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await gated.waiting(1); // admitted: its hold is in Redis
  redis.pause(); // hung, not down: the settlement's command gets no answer
  gated.open();
  expect((await res).status).toBe(200);
  await pod.close();

  // On disk by the time close() returns, nothing refused or lost on the way.
  const inFile = pendingSettlements(await readFile(join(journalDir, JOURNAL_FILE), 'utf8'));
  expect(inFile).toHaveLength(1);
  expect(inFile[0]!.amountUsd).toBeCloseTo(COST, 12);
  const said = (msg: string) => logs.some((l) => l.msg.startsWith(msg));
  expect(said('settlements the stores have not acknowledged: cutting')).toBe(true);
  expect(said('budget store unavailable; settlement journaled')).toBe(true);
  expect(said('settlement journal write failed')).toBe(false);
  expect(said('exiting with settlements the stores have not acknowledged')).toBe(false);

  // The resumed Redis may run the cut command too: a reservation is settled once, however often.
  redis.resume();
  const next = await boot(journalDir, []);
  try {
    expect(next.journal?.pending).toBe(0); // replayed before serving
    expect((await next.stores.budgets.state(KEY_REF, BUDGET)).spentUsd).toBeCloseTo(COST, 12);
    await next.journal?.replay();
    expect((await next.stores.budgets.state(KEY_REF, BUDGET)).spentUsd).toBeCloseTo(COST, 12);
  } finally {
    await next.close();
  }
});
