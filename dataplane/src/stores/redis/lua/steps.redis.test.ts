/**
 * The money scripts composed from shared steps (steps.ts) against the scripts as they were
 * before (testing/reference-lua, frozen), on a real redis-server: random runs of rate-only
 * acquires, budget-only holds, admissions, token corrections, budget settles and one-step
 * settlements, with the clock moving, on two namespaces fed the same keys and arguments. Every
 * reply must be equal, and so must everything in Redis (ledger stream ids aside), so pods on
 * either version agree during a rolling upgrade.
 *
 * The new scripts run as the stores run them (EVALSHA through defineCommand, the settlement in a
 * pipeline, numbers through arg()); the old ones by EVAL. Expiries are compared as remaining
 * time, and every few steps both sides' expiring keys are aged alike (halved), so a script that
 * re-arms an expiry the old one kept shows up as a whole half-life apart, not milliseconds.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../../test/harness/redis.ts';
import type { UsageRecord } from '../../../accounting/usage.ts';
import { createRedisStores, type Stores } from '../../index.ts';
import { fakeClock } from '../../testing/backends.ts';
import { RedisUsageStore } from '../../usage/redis.ts';
import { KeySpace } from '../keys.ts';
import { arg, bindScript, bindVariadicScript, type BoundScript } from '../script.ts';
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
/** The last key's budget runs at the largest amounts, apart so the others keep ordinary ones. */
const KEY_IDS = ['k1', 'k2', 'big'];
const isBig = (keyId: string): boolean => keyId === 'big';
/** The largest amount arg() sends. */
const MAX = Number.MAX_SAFE_INTEGER;
/** The ledger bound the new scripts get (the old ones keep every entry): more than a run appends. */
const LEDGER_KEPT = 100_000;
/** Holds that lapse at once: more than the 512 one call drops. */
const LAPSED = 700;

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

interface Entry {
  type: string;
  value: unknown;
}

/** Everything under `prefix` with the prefix taken off, and its remaining time (PTTL). */
async function snapshot(
  admin: Redis,
  prefix: string,
): Promise<{ entries: Record<string, Entry>; ttls: Record<string, number> }> {
  const entries: Record<string, Entry> = {};
  const ttls: Record<string, number> = {};
  for (const name of (await admin.keys(`${prefix}:*`)).sort()) {
    ttls[name.slice(prefix.length)] = await admin.pttl(name);
    const type = await admin.type(name);
    let value: unknown;
    if (type === 'string') value = await admin.get(name);
    else if (type === 'hash') value = await admin.hgetall(name);
    else if (type === 'zset') value = await admin.zrange(name, 0, -1, 'WITHSCORES');
    else if (type === 'list') value = await admin.lrange(name, 0, -1);
    else if (type === 'set') value = (await admin.smembers(name)).sort();
    else if (type === 'stream') value = (await admin.xrange(name, '-', '+')).map(([, fields]) => fields);
    else value = type;
    entries[name.slice(prefix.length)] = { type, value };
  }
  return { entries, ttls };
}

/** Both sides set the same expiries a few milliseconds apart; a re-armed one is 10 s or more off. */
const TTL_SLACK_MS = 2_000;
/** Keys aged only above this, so none comes near expiring (in real time) during a run. */
const AGE_ABOVE_MS = 20_000;

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

type Script = 'acquire' | 'adjust' | 'reserve' | 'settle' | 'admit' | 'settleAll';

interface Side {
  prefix: string;
  keys: KeySpace;
  usage: RedisUsageStore;
  /** Runs one of this side's scripts. */
  run: (script: Script, keys: string[], args: (string | number)[]) => Promise<unknown>;
}

/** Numbers as the stores send them: through arg(), which refuses anything but a safe integer. */
const sent = (args: readonly (string | number)[]): string[] =>
  args.map((a) => (typeof a === 'number' ? arg(a) : a));

/** The new scripts bound as the stores bind them: EVALSHA, and the settlement in a pipeline. */
function boundRunner(client: Redis): Side['run'] {
  const bound: Record<Exclude<Script, 'settleAll'>, BoundScript> = {
    acquire: bindScript(client, rateAcquire, 'test'),
    adjust: bindScript(client, rateAdjust, 'test'),
    reserve: bindScript(client, budgetReserve, 'test'),
    settle: bindScript(client, budgetSettle, 'test'),
    admit: bindVariadicScript(client, admitScript, 'test'),
  };
  client.defineCommand(settleScript.name, { lua: settleScript.lua });
  return async (script, keys, args) => {
    if (script !== 'settleAll') return bound[script](keys, sent(args));
    const p = client.pipeline();
    const cmd = (p as unknown as Record<string, (...a: string[]) => unknown>)[settleScript.name]!;
    cmd.call(p, String(keys.length), ...keys, ...sent(args));
    const [[err, reply]] = (await p.exec()) as [[Error | null, unknown]];
    if (err) throw err;
    return reply;
  };
}

/** The frozen scripts, by EVAL. */
function evalRunner(client: Redis, lua: Record<Script, string>): Side['run'] {
  return (script, keys, args) => client.eval(lua[script], keys.length, ...keys, ...args.map(String));
}

describe('money scripts composed from shared steps, against the scripts before', () => {
  const url = testRedisUrl();
  let admin: Redis;
  let scriptClient: Redis;
  let newRun: Side['run'];
  const opened: Stores[] = [];

  beforeAll(() => {
    admin = new Redis(url);
    scriptClient = new Redis(url);
    newRun = boundRunner(scriptClient);
  });

  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    admin.disconnect();
    scriptClient.disconnect();
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
      const side = async (name: string, runScript: Side['run']): Promise<Side> => {
        const prefix = `steps-${name}-${run}`;
        const stores = createRedisStores({ url }, { prefix, clock: clock.now });
        opened.push(stores);
        await stores.ready();
        if (!(stores.usage instanceof RedisUsageStore)) throw new Error('not the Redis usage store');
        return { prefix, keys: new KeySpace(prefix), usage: stores.usage, run: runScript };
      };
      const sides = [
        await side('new', newRun),
        await side(
          'ref',
          evalRunner(admin, {
            acquire: refRate.rateAcquire.lua,
            adjust: refRate.rateAdjust.lua,
            reserve: refBudget.budgetReserve.lua,
            settle: refBudget.budgetSettle.lua,
            admit: refAdmit.admitScript.lua,
            settleAll: refSettle.settleScript.lua,
          }),
        ),
      ] as const;

      // What both sides hold, by this run's own ids: window entries and holds to correct.
      const tickets: { keyId: string; id: string; tokens: number }[] = [];
      const holds: { keyId: string; id: string; period: string; limit: number }[] = [];
      let n = 0;
      const both = async (
        script: Script,
        keys: (s: Side) => string[],
        args: (string | number)[],
      ): Promise<unknown> => {
        const replies: unknown[] = [];
        for (const s of sides) replies.push(await s.run(script, keys(s), args));
        expect(replies[0], `${script} #${n}`).toEqual(replies[1]);
        return replies[0];
      };

      const compare = async () => {
        const [a, b] = [await snapshot(admin, sides[0].prefix), await snapshot(admin, sides[1].prefix)];
        expect(Object.keys(a.entries).length).toBeGreaterThan(0);
        expect(a.entries, `state after #${n}`).toEqual(b.entries);
        for (const [name, ttl] of Object.entries(a.ttls)) {
          const other = b.ttls[name]!;
          if (ttl < 0 || other < 0) expect(ttl, `${name} expiry after #${n}`).toBe(other);
          else
            expect(Math.abs(ttl - other), `${name} expiry after #${n}: ${ttl} vs ${other}`).toBeLessThan(
              TTL_SLACK_MS,
            );
        }
        return a.ttls;
      };
      // Halves what both sides' expiring keys have left: an expiry that is kept stays halved, one
      // re-armed is back to full, on that side only.
      const age = async (ttls: Record<string, number>) => {
        for (const [name, ttl] of Object.entries(ttls))
          if (ttl > AGE_ABOVE_MS)
            for (const s of sides) {
              const own = await admin.pttl(s.prefix + name);
              if (own > AGE_ABOVE_MS) await admin.pexpire(s.prefix + name, Math.floor(own / 2));
            }
      };

      // Another pod's clock, behind or ahead of this one's; the window's newest entry can then be
      // later than now.
      const skew = () => pick([0, 0, 0, 0, -3_000, -30_000, 5_000]);
      const rateArgs = (id: string, tokens: number) => {
        const rpm = pick([0, 2, 5, 40]);
        const tpm = pick([0, 0, 600, 3000]);
        return [clock.now() + skew(), WINDOW, rpm, rpm === 0 && tpm === 0 ? 1500 : tpm, tokens, id];
      };
      const holdArgs = (keyId: string, id: string, period: string) => ({
        keys: (s: Side) => [
          s.keys.budget({ tenant: TENANT, keyId }),
          s.keys.spent({ tenant: TENANT, keyId }, period),
          s.keys.reservations({ tenant: TENANT, keyId }),
          s.keys.reservationExpiry({ tenant: TENANT, keyId }),
        ],
        limit: isBig(keyId) ? pick([MAX, MAX, 2 ** 52]) : pick([4_000_000, 10_000_000]),
        cost: isBig(keyId)
          ? pick([0, 1_000_000, 2 ** 52, MAX - 1, MAX])
          : pick([0, 500_000, 1_000_000, 2_500_000, 6_000_000]),
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
        LEDGER_KEPT,
      ];

      for (const s of sides) await admin.hset(s.keys.wallet(TENANT), 'balance', '20000000');
      // The rare cases each run must reach, so a change of seed or mix cannot drop one unnoticed.
      const seen = new Set<string>();
      for (; n < 400; n++) {
        const keyId = pick(KEY_IDS);
        const ref = { tenant: TENANT, keyId };
        const rateKeys = (s: Side) => [s.keys.rateWindow(ref), s.keys.rateTokens(ref)];
        // A new period every 80 steps (a month turning over), so first charges keep creating counters.
        const current = `p${1 + Math.floor(n / 80)}`;
        const period = pick([current, current, current, 'p0']);
        // Steps 50, 250: a one-step direct charge that creates its period's counter, retention 0.
        const firstCharge = n % 200 === 50;
        const op = firstCharge ? 0.85 : rnd();
        if (n % 200 === 100) {
          // Holds that all lapse before the next call: it drops 512, a later one the rest.
          const at = clock.now() + 1;
          for (const s of sides) {
            const p = admin.pipeline();
            for (let i = 0; i < LAPSED; i++) {
              p.hset(s.keys.reservations(ref), `l${n}-${i}`, '1000');
              p.zadd(s.keys.reservationExpiry(ref), at, `l${n}-${i}`);
            }
            p.hincrby(s.keys.budget(ref), 'held', LAPSED * 1000);
            await p.exec();
          }
          clock.advance(10);
          const h = holdArgs(keyId, `h${n}`, period);
          const args = [
            clock.now(),
            h.limit,
            0,
            h.id,
            clock.now() + 900_000,
            0,
            '0',
            0,
            0,
            0,
            0,
            keyId,
            `r${n}`,
            LEDGER_KEPT,
          ];
          await both('reserve', (s) => [...h.keys(s), ...rechargeKeys(s, keyId)], args);
          const left = await admin.zcount(sides[0].keys.reservationExpiry(ref), '-inf', clock.now());
          if (left >= LAPSED - 512) seen.add('more than 512 lapsed');
        } else if (op < 0.2) {
          const id = `t${n}`;
          const tokens = pick([0, 100, 250, 700, 4000]);
          const args = rateArgs(id, tokens);
          const reply = (await both('acquire', rateKeys, args)) as number[];
          if (reply[0] === 1) tickets.push({ keyId, id, tokens });
          if (reply[0] === 1 && reply[6]! > Number(args[0])) seen.add('newest later than now');
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
            ...(recharge
              ? rechargeArgs(keyId, `r${n}`)
              : [0, 0, 0, 62 * 86_400_000, keyId, `r${n}`, LEDGER_KEPT]),
          ])) as number[];
          if (reply[0] === 1) holds.push({ keyId, id: h.id, period, limit: h.limit });
          if (reply[0] === 1 && h.cost >= 2 ** 52) seen.add('hold near 2^53');
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
            if (h.cost >= 2 ** 52) seen.add('hold near 2^53');
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
              : { keyId, id: `c${n}`, period, limit: isBig(keyId) ? MAX : 10_000_000 };
          const r = { tenant: TENANT, keyId: h.keyId };
          const settled = await both(
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
              isBig(h.keyId) ? pick([0, 1, 2 ** 52, MAX]) : pick([0, 300_000, 1_200_000, 7_000_000]),
              h.limit,
              pick([0, 86_400_000]),
              3_600_000,
              clock.now(),
            ],
          );
          if ((settled as number[])[1]! >= 2 ** 52) seen.add('charge near 2^53');
        } else if (op < 0.9) {
          // The one-step settlement, with each part present or not, and its usage record.
          const h = firstCharge
            ? { keyId, id: `c${n}`, period: `q${n}`, limit: isBig(keyId) ? MAX : 10_000_000 }
            : holds.length && rnd() < 0.7
              ? holds.splice(Math.floor(rnd() * holds.length), 1)[0]
              : undefined;
          const t =
            tickets.length && rnd() < 0.7
              ? tickets.splice(Math.floor(rnd() * tickets.length), 1)[0]
              : undefined;
          const amount = firstCharge
            ? 400_000
            : h && isBig(h.keyId)
              ? pick([0, 1, 2 ** 52, MAX])
              : pick([0, 400_000, 2_000_000]);
          const retention = firstCharge ? 0 : pick([0, 86_400_000]);
          const actual = pick([0, 120, 900]);
          const rec = usageRecord(`u${n}`, keyId, clock.now());
          const creates =
            h !== undefined &&
            (await admin.exists(sides[1].keys.spent({ tenant: TENANT, keyId: h.keyId }, h.period))) === 0;
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
              args.push(h.id, amount, h.limit, retention, 3_600_000, clock.now());
            }
            if (t) {
              const r = { tenant: TENANT, keyId: t.keyId };
              keys.push(s.keys.rateWindow(r), s.keys.rateTokens(r));
              args.push(`${t.id}:${t.tokens}`, `${t.id}:${actual}`, actual - t.tokens, WINDOW);
            }
            const call = s.usage.recordCall(rec);
            keys.push(...call.keys);
            args.push(...call.args);
            replies.push(await s.run('settleAll', keys, args));
          }
          expect(replies[0], `settleAll #${n}`).toEqual(replies[1]);
          const [budget] = replies[0] as [number[] | 0];
          if (creates && retention === 0 && budget !== 0 && budget[1]! > 0)
            seen.add('one-step charge creates spent, retention 0');
        } else if (op < 0.93) {
          // What a lost write or an eviction leaves: a window without its counter, or a held
          // total that no hold is behind. Both sides get the same damage.
          const damage = rnd() < 0.5;
          for (const s of sides)
            if (damage) await admin.del(s.keys.rateTokens(ref));
            else await admin.hset(s.keys.budget(ref), 'held', '9000000');
        } else {
          // Mostly forward; sometimes back (a pod whose clock is behind takes the next call).
          const step = pick([10, 1_000, 20_000, 45_000, 15 * 60_000 + 1, -5_000, -40_000]);
          clock.advance(step);
          if (step < 0) seen.add('clock moved back');
        }
        if (n % 10 === 9) await age(await compare());
      }
      expect([...seen].sort()).toEqual([
        'charge near 2^53',
        'clock moved back',
        'hold near 2^53',
        'more than 512 lapsed',
        'newest later than now',
        'one-step charge creates spent, retention 0',
      ]);
    });
  }
});
