/**
 * The money scripts composed from shared steps (steps.ts) against the scripts as they were
 * before (testing/reference-lua, frozen), on a real redis-server: random runs of rate-only
 * acquires, budget-only holds, admissions, token corrections, budget settles and one-step
 * settlements, with the clock moving, on two namespaces fed the same keys and arguments. Every
 * reply must be equal, and so must everything in Redis (ledger stream ids aside), so pods on
 * either version agree during a rolling upgrade.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../../test/harness/redis.ts';
import type { UsageRecord } from '../../../accounting/usage.ts';
import { createRedisStores, type Stores } from '../../index.ts';
import { fakeClock } from '../../testing/backends.ts';
import { RedisUsageStore } from '../../usage/redis.ts';
import { KeySpace } from '../keys.ts';
import * as refAdmit from '../testing/reference-lua/admit.ts';
import * as refBudget from '../testing/reference-lua/budget.ts';
import * as refRate from '../testing/reference-lua/rate-limit.ts';
import * as refSettle from '../testing/reference-lua/settle.ts';
import { admitScript } from './admit.ts';
import { budgetReserve, budgetSettle } from './budget.ts';
import { rateAcquire, rateAdjust } from './rate-limit.ts';
import { settleScript } from './settle.ts';
import { BUDGET_BASE, BUDGET_HOLD, BUDGET_SETTLE, RATE_ADJUST, RATE_DECIDE } from './steps.ts';

const WINDOW = 60_000;
const TENANT = 'acme';
const KEY_IDS = ['k1', 'k2'];

/** Deterministic, so a failing run can be replayed from its seed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Everything under `prefix` with the prefix taken off, and whether and roughly when it expires. */
async function snapshot(admin: Redis, prefix: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of (await admin.keys(`${prefix}:*`)).sort()) {
    const ttl = await admin.pttl(name);
    // Both sides set the same TTLs a few milliseconds apart.
    const expiry = ttl < 0 ? ttl : Math.round(ttl / 5_000);
    const type = await admin.type(name);
    let value: unknown;
    if (type === 'string') value = await admin.get(name);
    else if (type === 'hash') value = await admin.hgetall(name);
    else if (type === 'zset') value = await admin.zrange(name, 0, -1, 'WITHSCORES');
    else if (type === 'list') value = await admin.lrange(name, 0, -1);
    else if (type === 'set') value = (await admin.smembers(name)).sort();
    else if (type === 'stream') value = (await admin.xrange(name, '-', '+')).map(([, fields]) => fields);
    else value = type;
    out[name.slice(prefix.length)] = { type, expiry, value };
  }
  return out;
}

function usageRecord(id: string, keyId: string, at: number): UsageRecord {
  return {
    id,
    at,
    tenant: TENANT,
    keyId,
    endpoint: 'chat',
    requestedModel: 'gpt-4o-mini',
    model: 'gpt-4o-mini',
    deployment: 'd1',
    provider: 'openai',
    euResident: false,
    status: 200,
    errorType: undefined,
    stream: false,
    attempts: 1,
    promptTokens: 20,
    completionTokens: 5,
    totalTokens: 25,
    costUsd: 0.00001,
    latencyMs: 3,
    cache: undefined,
    guardrails: undefined,
    compression: undefined,
    routing: undefined,
  };
}

interface Side {
  prefix: string;
  keys: KeySpace;
  usage: RedisUsageStore;
  /** The scripts this side runs. */
  lua: {
    acquire: string;
    adjust: string;
    reserve: string;
    settle: string;
    admit: string;
    settleAll: string;
  };
}

describe('money scripts composed from shared steps, against the scripts before', () => {
  const url = testRedisUrl();
  let admin: Redis;
  const opened: Stores[] = [];

  beforeAll(() => {
    admin = new Redis(url);
  });

  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    admin.disconnect();
  });

  it('each path runs the same text for the same step', () => {
    for (const lua of [rateAcquire.lua, admitScript.lua]) expect(lua).toContain(RATE_DECIDE);
    for (const lua of [budgetReserve.lua, admitScript.lua]) expect(lua).toContain(BUDGET_HOLD);
    for (const lua of [budgetSettle.lua, settleScript.lua]) expect(lua).toContain(BUDGET_SETTLE);
    for (const lua of [rateAdjust.lua, settleScript.lua]) expect(lua).toContain(RATE_ADJUST);
    for (const lua of [budgetReserve.lua, budgetSettle.lua, admitScript.lua, settleScript.lua])
      expect(lua).toContain(BUDGET_BASE);
    // No script carries a step it never runs.
    expect(rateAcquire.lua).not.toContain('function budget');
    expect(budgetReserve.lua).not.toContain('function rate');
    expect(admitScript.lua).not.toContain('function rateAdjust');
  });

  for (const seed of [1, 2, 3, 4]) {
    it(`leaves Redis and replies as the scripts before did (seed ${seed})`, async () => {
      const rnd = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const clock = fakeClock();
      const run = `${seed}-${Date.now()}`;
      const side = async (name: string, lua: Side['lua']): Promise<Side> => {
        const prefix = `steps-${name}-${run}`;
        const stores = createRedisStores({ url }, { prefix, clock: clock.now });
        opened.push(stores);
        await stores.ready();
        if (!(stores.usage instanceof RedisUsageStore)) throw new Error('not the Redis usage store');
        return { prefix, keys: new KeySpace(prefix), usage: stores.usage, lua };
      };
      const sides = [
        await side('new', {
          acquire: rateAcquire.lua,
          adjust: rateAdjust.lua,
          reserve: budgetReserve.lua,
          settle: budgetSettle.lua,
          admit: admitScript.lua,
          settleAll: settleScript.lua,
        }),
        await side('ref', {
          acquire: refRate.rateAcquire.lua,
          adjust: refRate.rateAdjust.lua,
          reserve: refBudget.budgetReserve.lua,
          settle: refBudget.budgetSettle.lua,
          admit: refAdmit.admitScript.lua,
          settleAll: refSettle.settleScript.lua,
        }),
      ] as const;

      // What both sides hold, by this run's own ids: window entries and holds to correct.
      const tickets: { keyId: string; id: string; tokens: number }[] = [];
      const holds: { keyId: string; id: string; period: string; limit: number }[] = [];
      let n = 0;
      const both = async (
        script: keyof Side['lua'],
        keys: (s: Side) => string[],
        args: (string | number)[],
      ): Promise<unknown> => {
        const replies: unknown[] = [];
        for (const s of sides) {
          const k = keys(s);
          replies.push(await admin.eval(s.lua[script], k.length, ...k, ...args.map(String)));
        }
        expect(replies[0], `${script} #${n}`).toEqual(replies[1]);
        return replies[0];
      };

      const rateArgs = (id: string, tokens: number) => {
        const rpm = pick([0, 2, 5, 40]);
        const tpm = pick([0, 0, 600, 3000]);
        return [clock.now(), WINDOW, rpm, rpm === 0 && tpm === 0 ? 1500 : tpm, tokens, id];
      };
      const holdArgs = (keyId: string, id: string, period: string) => ({
        keys: (s: Side) => [
          s.keys.budget({ tenant: TENANT, keyId }),
          s.keys.spent({ tenant: TENANT, keyId }, period),
          s.keys.reservations({ tenant: TENANT, keyId }),
          s.keys.reservationExpiry({ tenant: TENANT, keyId }),
        ],
        limit: pick([4_000_000, 10_000_000]),
        cost: pick([0, 500_000, 1_000_000, 2_500_000, 6_000_000]),
        id,
      });
      const rechargeKeys = (s: Side, keyId: string) => [
        s.keys.recharged({ tenant: TENANT, keyId }, '2026-11'),
        s.keys.wallet(TENANT),
        s.keys.ledger(TENANT),
      ];
      const rechargeArgs = (keyId: string, ref: string) => [
        pick([1_000_000, 3_000_000]),
        pick([0, 2_000_000, 5_000_000]),
        pick([4_000_000, 12_000_000]),
        62 * 86_400_000,
        keyId,
        ref,
      ];

      for (const s of sides) await admin.hset(s.keys.wallet(TENANT), 'balance', '20000000');
      for (; n < 400; n++) {
        const keyId = pick(KEY_IDS);
        const ref = { tenant: TENANT, keyId };
        const rateKeys = (s: Side) => [s.keys.rateWindow(ref), s.keys.rateTokens(ref)];
        const period = pick(['p1', 'p1', 'p1', 'p2']);
        const op = rnd();
        if (op < 0.2) {
          const id = `t${n}`;
          const tokens = pick([0, 100, 250, 700, 4000]);
          const reply = (await both('acquire', rateKeys, rateArgs(id, tokens))) as number[];
          if (reply[0] === 1) tickets.push({ keyId, id, tokens });
        } else if (op < 0.35) {
          const h = holdArgs(keyId, `h${n}`, period);
          const recharge = rnd() < 0.3;
          const reply = (await both('reserve', (s) => [...h.keys(s), ...rechargeKeys(s, keyId)], [
            clock.now(),
            h.limit,
            h.cost,
            h.id,
            clock.now() + 900_000,
            86_400_000,
            recharge ? '1' : '0',
            ...(recharge ? rechargeArgs(keyId, `r${n}`) : [0, 0, 0, 62 * 86_400_000, keyId, `r${n}`]),
          ])) as number[];
          if (reply[0] === 1) holds.push({ keyId, id: h.id, period, limit: h.limit });
        } else if (op < 0.6) {
          const id = `t${n}`;
          const tokens = pick([0, 100, 250, 700, 4000]);
          const h = holdArgs(keyId, `h${n}`, period);
          const recharge = rnd() < 0.3;
          const reply = (await both(
            'admit',
            (s) => [...rateKeys(s), ...h.keys(s), ...(recharge ? rechargeKeys(s, keyId) : [])],
            [
              ...rateArgs(id, tokens),
              h.limit,
              h.cost,
              h.id,
              clock.now() + 900_000,
              ...(recharge ? rechargeArgs(keyId, `r${n}`) : []),
            ],
          )) as [number[], number[] | 0];
          const budget = reply[1];
          if (budget !== 0 && budget[0] === 1) {
            tickets.push({ keyId, id, tokens });
            holds.push({ keyId, id: h.id, period, limit: h.limit });
          }
        } else if (op < 0.7 && tickets.length) {
          const t = tickets.splice(Math.floor(rnd() * tickets.length), 1)[0]!;
          const actual = pick([0, 50, t.tokens, t.tokens + 300]);
          const r = { tenant: TENANT, keyId: t.keyId };
          await both('adjust', (s) => [s.keys.rateWindow(r), s.keys.rateTokens(r)], [
            `${t.id}:${t.tokens}`,
            `${t.id}:${actual}`,
            actual - t.tokens,
            WINDOW,
          ]);
        } else if (op < 0.8) {
          // A hold of this run, or an id that holds nothing (a direct charge), settled or released.
          const h =
            holds.length && rnd() < 0.8
              ? holds[Math.floor(rnd() * holds.length)]!
              : { keyId, id: `c${n}`, period, limit: 10_000_000 };
          const r = { tenant: TENANT, keyId: h.keyId };
          await both(
            'settle',
            (s) => [
              s.keys.budget(r),
              s.keys.spent(r, h.period),
              s.keys.reservations(r),
              s.keys.reservationExpiry(r),
              s.keys.settled(r, h.id),
            ],
            [
              h.id,
              pick([0, 300_000, 1_200_000, 7_000_000]),
              h.limit,
              pick([0, 86_400_000]),
              3_600_000,
              clock.now(),
            ],
          );
        } else if (op < 0.9) {
          // The one-step settlement, with each part present or not, and its usage record.
          const h =
            holds.length && rnd() < 0.7 ? holds.splice(Math.floor(rnd() * holds.length), 1)[0] : undefined;
          const t =
            tickets.length && rnd() < 0.7
              ? tickets.splice(Math.floor(rnd() * tickets.length), 1)[0]
              : undefined;
          const amount = pick([0, 400_000, 2_000_000]);
          const actual = pick([0, 120, 900]);
          const rec = usageRecord(`u${n}`, keyId, clock.now());
          const replies: unknown[] = [];
          for (const s of sides) {
            const keys: string[] = [];
            const args: (string | number)[] = [h ? '1' : '0', t ? '1' : '0'];
            if (h) {
              const r = { tenant: TENANT, keyId: h.keyId };
              keys.push(
                s.keys.budget(r),
                s.keys.spent(r, h.period),
                s.keys.reservations(r),
                s.keys.reservationExpiry(r),
                s.keys.settled(r, h.id),
              );
              args.push(h.id, amount, h.limit, 86_400_000, 3_600_000, clock.now());
            }
            if (t) {
              const r = { tenant: TENANT, keyId: t.keyId };
              keys.push(s.keys.rateWindow(r), s.keys.rateTokens(r));
              args.push(`${t.id}:${t.tokens}`, `${t.id}:${actual}`, actual - t.tokens, WINDOW);
            }
            const call = s.usage.recordCall(rec);
            keys.push(...call.keys);
            args.push(...call.args);
            replies.push(await admin.eval(s.lua.settleAll, keys.length, ...keys, ...args.map(String)));
          }
          expect(replies[0], `settleAll #${n}`).toEqual(replies[1]);
        } else if (op < 0.93) {
          // What a lost write or an eviction leaves: a window without its counter, or a held
          // total that no hold is behind. Both sides get the same damage.
          const damage = rnd() < 0.5;
          for (const s of sides)
            if (damage) await admin.del(s.keys.rateTokens(ref));
            else await admin.hset(s.keys.budget(ref), 'held', '9000000');
        } else {
          clock.advance(pick([10, 1_000, 20_000, 45_000, 15 * 60_000 + 1]));
        }
        if (n % 40 === 39) {
          const [a, b] = [await snapshot(admin, sides[0].prefix), await snapshot(admin, sides[1].prefix)];
          expect(Object.keys(a).length).toBeGreaterThan(0);
          expect(a, `state after #${n}`).toEqual(b);
        }
      }
    });
  }
});
