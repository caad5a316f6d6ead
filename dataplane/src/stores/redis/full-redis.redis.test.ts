/**
 * A Redis at its maxmemory under `noeviction` (the policy billing wants) refuses writes with
 * `OOM command not allowed ...`: not serving right now, like LOADING or READONLY, so a charge it
 * refuses is journaled and replayed, never dropped as a script error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../../../../test/harness/redis.ts';
import { chargeTarget } from '../charge-target.ts';
import { createRedisStores, isStoreUnavailable, type Stores } from '../index.ts';
import { SettlementJournal } from '../journal/journal.ts';
import { toStoreError } from './client.ts';

let redis: RedisInstance;
let admin: Redis;
let stores: Stores;
let dir: string;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
  stores = createRedisStores({ url: redis.url }, { prefix: 'full' });
  await stores.ready();
  dir = await mkdtemp(join(tmpdir(), 'gantry-full-redis-'));
});
afterAll(async () => {
  await stores?.close();
  admin?.disconnect();
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

const req = {
  tenant: 'acme',
  keyId: 'k',
  budget: { limitUsd: 10, period: 'monthly' as const },
  amountUsd: 0.004,
  id: 'resp-full',
};

async function fill(): Promise<void> {
  // Something to hold, then a limit below what is held: every write is refused from now on.
  await admin.set('filler', 'x'.repeat(256 * 1024));
  const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  await admin.config('SET', 'maxmemory', String(used - 128 * 1024));
  await expect(admin.set('probe', '1')).rejects.toThrow(/^OOM/);
}

it('maps the OOM and MISCONF replies to "store unavailable", a script error stays itself', () => {
  const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
  expect(
    isStoreUnavailable(
      toStoreError('budget.charge', reply("OOM command not allowed when used memory > 'maxmemory'.")),
    ),
  ).toBe(true);
  expect(
    isStoreUnavailable(
      toStoreError('budget.charge', reply('MISCONF Redis is configured to save RDB snapshots')),
    ),
  ).toBe(true);
  expect(isStoreUnavailable(toStoreError('budget.charge', reply('ERR user_script:1: bad argument')))).toBe(
    false,
  );
});

it('a charge a full Redis refuses is journaled, kept while it stays full, and charged once when it has room', async () => {
  await fill();
  const err = await stores.budgets.charge(req).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(String(err)).toMatch(/OOM/);
  expect(isStoreUnavailable(err)).toBe(true);

  const dropped: string[] = [];
  const journal = await SettlementJournal.open({
    dir,
    retryMs: 3_600_000,
    apply: async ({ reservation, amountUsd }) => void (await stores.budgets.settle(reservation, amountUsd)),
    onDropped: (_s, e) => dropped.push(String(e)),
  });
  const at = Date.now();
  await journal.add({ reservation: chargeTarget(req, at), amountUsd: req.amountUsd, at });
  await journal.replay();
  expect(dropped).toEqual([]);
  expect(journal.pending).toBe(1);

  await admin.config('SET', 'maxmemory', '0');
  await journal.replay();
  await journal.replay();
  expect(journal.pending).toBe(0);
  expect(dropped).toEqual([]);
  const state = await stores.budgets.state({ tenant: 'acme', keyId: 'k' }, req.budget);
  expect(state.spentUsd).toBeCloseTo(0.004, 9);
  await journal.close();
});
