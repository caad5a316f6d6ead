/**
 * The settlement journal against a real redis-server: an outage of any length loses no spend,
 * a replay charges each settlement exactly once, and a restart picks up what was left.
 * Unreachability is simulated at the apply boundary (the store itself is real), and time by
 * fake timers, so a minute of outage takes milliseconds.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import type { BudgetLimit, Reservation } from '../budget.ts';
import { StoreUnavailableError } from '../errors.ts';
import { createRedisStores, type Stores } from '../index.ts';
import {
  doneLine,
  LOGGED_SETTLEMENTS,
  owedSummary,
  pendingSettlements,
  settleLine,
  type PendingSettlement,
} from './entries.ts';
import { JOURNAL_FILE, SettlementJournal } from './journal.ts';

const BUDGET: BudgetLimit = { limitUsd: 10, period: 'monthly' };

let stores: Stores;
let dir: string;
let key: { tenant: string; keyId: string };

beforeAll(() => {
  stores = createRedisStores({ url: testRedisUrl() }, { prefix: `journal-${randomUUID()}` });
  return stores.ready();
});
afterAll(() => stores.close());
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gantry-journal-test-'));
  key = { tenant: 'acme', keyId: `k-${randomUUID()}` };
});
afterEach(async () => {
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

async function reserve(estimateUsd: number): Promise<Reservation> {
  const r = await stores.budgets.reserve({ ...key, budget: BUDGET, estimateUsd });
  if (!r.ok) throw new Error('reservation refused');
  return r.reservation;
}

const spent = async (): Promise<number> => (await stores.budgets.state(key, BUDGET)).spentUsd;

/** The real budget store behind a switch: while `down`, every call fails as an outage does. */
function applier() {
  const state = { down: true, calls: 0 };
  const apply = async ({ reservation, amountUsd }: PendingSettlement) => {
    state.calls += 1;
    if (state.down) throw new StoreUnavailableError('budget.settle', new Error('connect ECONNREFUSED'));
    await stores.budgets.settle(reservation, amountUsd);
  };
  return { state, apply };
}

describe('journal file format', () => {
  const entry = (id: string, amountUsd = 1): PendingSettlement => ({
    reservation: {
      tenant: 't',
      keyId: 'k',
      id,
      periodKey: 'm2026-11',
      limitUsd: 5,
      amountUsd: 2,
      expiresAt: 0,
      periodRetentionMs: undefined,
    },
    amountUsd,
    at: 1,
  });

  it('owes every settle without a later done, oldest first, once per reservation', () => {
    const text = [
      settleLine(entry('a')),
      settleLine(entry('b', 2)),
      settleLine(entry('c', 3)),
      doneLine('b'),
      settleLine(entry('a', 9)),
      '{"kind":"settle","entry":{"reserv', // a crash mid-write
      '',
    ].join('');
    expect(pendingSettlements(text).map((p) => [p.reservation.id, p.amountUsd])).toEqual([
      ['a', 1],
      ['c', 3],
    ]);
    expect(pendingSettlements('not json\n{"kind":"settle"}\n')).toEqual([]);
  });

  it('sums what is owed to the micro-dollar and names at most LOGGED_SETTLEMENTS of them', () => {
    const many = Array.from({ length: LOGGED_SETTLEMENTS + 5 }, (_, i) => entry(`r${i}`, 0.1));
    const summary = owedSummary(many);
    expect(summary.pending).toBe(LOGGED_SETTLEMENTS + 5);
    expect(summary.owedUsd).toBe(10.5); // 105 × 0.1 without float drift
    expect(summary.settlements).toHaveLength(LOGGED_SETTLEMENTS);
    expect(summary.settlements[0]).toEqual({
      id: 'r0',
      tenant: 't',
      keyId: 'k',
      periodKey: 'm2026-11',
      amountUsd: 0.1,
    });
    expect(owedSummary([])).toEqual({ pending: 0, owedUsd: 0, settlements: [] });
  });
});

describe('SettlementJournal', () => {
  it('drain() replays until the store takes everything, and gives up at its window with what is left', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { state, apply } = applier();
    const journal = await SettlementJournal.open({ dir, apply, retryMs: 10 });
    const reservation = await reserve(0.5);
    await journal.add({ reservation, amountUsd: 0.25, at: Date.now() });

    const gaveUp = journal.drain(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    const left = await gaveUp;
    expect(left.map((s) => s.reservation.id)).toEqual([reservation.id]);
    expect(state.calls).toBeGreaterThan(50); // it kept trying through the window
    vi.useRealTimers();

    state.down = false;
    expect(await journal.drain(60_000)).toEqual([]);
    expect(await spent()).toBe(0.25);
    expect(await journal.drain(60_000)).toEqual([]); // nothing pending: at once
    await journal.close();
  });

  it('keeps a settlement through a minute of outage and applies it exactly once when the store returns', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { state, apply } = applier();
    const journal = await SettlementJournal.open({ dir, apply, retryMs: 1000 });
    const reservation = await reserve(0.5);

    await journal.add({ reservation, amountUsd: 0.123456, at: Date.now() });
    expect(journal.pending).toBe(1);
    // The old in-memory retries gave up after ~21 s; the journal never does.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(state.calls).toBeGreaterThanOrEqual(59);
    expect(journal.pending).toBe(1);
    expect(await spent()).toBe(0);

    state.down = false;
    vi.useRealTimers();
    await journal.replay(); // what the store's reconnect event triggers
    await journal.whenEmpty();
    expect(journal.pending).toBe(0);
    expect(await spent()).toBe(0.123456);
    // Applied, so the file is emptied; a further replay charges nothing more.
    expect(await readFile(join(dir, JOURNAL_FILE), 'utf8')).toBe('');
    await journal.replay();
    expect(await spent()).toBe(0.123456);
    await journal.close();
  });

  it('is on disk when add() resolves, and a restarted gateway applies what was left, once', async () => {
    const first = applier();
    const journal = await SettlementJournal.open({ dir, apply: first.apply, retryMs: 60_000 });
    const a = await reserve(0.2);
    const b = await reserve(0.3);
    await journal.add({ reservation: a, amountUsd: 0.1, at: 1 });
    await journal.add({ reservation: b, amountUsd: 0, at: 2 }); // a release: no charge, hold dropped
    expect(pendingSettlements(await readFile(join(dir, JOURNAL_FILE), 'utf8'))).toHaveLength(2);
    await journal.close(); // the process dies with the store still down

    const second = applier();
    second.state.down = false;
    const restarted = await SettlementJournal.open({ dir, apply: second.apply });
    expect(restarted.pending).toBe(2);
    await restarted.replay();
    expect(restarted.pending).toBe(0);
    const s = await stores.budgets.state(key, BUDGET);
    expect(s.spentUsd).toBe(0.1);
    expect(s.heldUsd).toBe(0);
    await restarted.close();

    const third = await SettlementJournal.open({ dir, apply: second.apply });
    expect(third.pending).toBe(0);
    await third.close();
  });

  it('replaying a settlement the store already took (its reply was lost) charges nothing more', async () => {
    const reservation = await reserve(0.4);
    await stores.budgets.settle(reservation, 0.25); // applied, but the caller saw a timeout
    const { state, apply } = applier();
    state.down = false;
    const journal = await SettlementJournal.open({ dir, apply });
    await journal.add({ reservation, amountUsd: 0.25, at: Date.now() });
    await journal.replay();
    await journal.whenEmpty();
    expect(await spent()).toBe(0.25);
    await journal.close();
  });

  it('drops a settlement the store refuses outright and goes on with the rest', async () => {
    const good = await reserve(0.1);
    const dropped: string[] = [];
    const journal = await SettlementJournal.open({
      dir,
      apply: async (s) => {
        if (s.reservation.id === 'bad') throw new Error('ERR script error');
        await stores.budgets.settle(s.reservation, s.amountUsd);
      },
      onDropped: (s) => dropped.push(s.reservation.id),
    });
    await journal.add({ reservation: { ...good, id: 'bad' }, amountUsd: 0.05, at: 1 });
    await journal.add({ reservation: good, amountUsd: 0.07, at: 2 });
    await journal.replay();
    expect(dropped).toEqual(['bad']);
    expect(journal.pending).toBe(0);
    expect(await spent()).toBe(0.07);
    await journal.close();
  });

  it('reads a journal left by an earlier run even when it ends in a torn line', async () => {
    const reservation = await reserve(0.3);
    await writeFile(
      join(dir, JOURNAL_FILE),
      settleLine({ reservation, amountUsd: 0.3, at: 1 }) + '{"kind":"settle","entry":{"res',
    );
    const { state, apply } = applier();
    state.down = false;
    const journal = await SettlementJournal.open({ dir, apply });
    expect(journal.pending).toBe(1);
    await journal.replay();
    expect(await spent()).toBe(0.3);
    await journal.close();
  });
});
