import type { Redis } from 'ioredis';
import {
  DEFAULT_RESERVATION_TTL_MS,
  DEFAULT_SETTLED_MEMORY_MS,
  type BudgetLimit,
  type BudgetState,
  type BudgetStore,
  type BudgetStoreOptions,
  type ChargeRequest,
  type Reservation,
  type ReserveRequest,
  type ReserveResult,
  type SettleResult,
  type WorkHeld,
  WORK_HOLDS_SUMMED,
} from '../budget.ts';
import { available } from '../budget-math.ts';
import { chargeTarget } from '../charge-target.ts';
import { newId } from '../ids.ts';
import { chargeMicros, fromMicros, toMicros } from '../money.ts';
import { monthKey, periodRetentionMs, periodWindow } from '../period.ts';
import { rechargeMicros, type RechargeMicros } from '../recharge.ts';
import { systemClock, type Clock, type KeyRef } from '../types.ts';
import { DEFAULT_LEDGER_MAX_ENTRIES } from '../wallet.ts';
import { toStoreError } from './client.ts';
import type { KeySpace } from './keys.ts';
import { budgetReserve, budgetRetain, budgetSettle, budgetState } from './lua/budget.ts';
import { arg, bindScript, int, type BoundScript } from './script.ts';

/** Recharge counters outlive their month long enough for key-health reports. */
const MONTH_RETENTION_MS = 62 * 86_400_000;

function triple(raw: unknown, what: string): [number, number, number] {
  if (!Array.isArray(raw) || raw.length < 3) throw new Error(`${what} script: unexpected reply`);
  return [int(raw[0], what), int(raw[1], what), int(raw[2], what)];
}

/** A hold before it is asked for: what the reserve and admission scripts are sent. */
interface HoldPlan {
  periodKey: string;
  limit: number;
  estimate: number;
  recharge: RechargeMicros | undefined;
  id: string;
  expiresAt: number;
  retention: number | undefined;
}

/** One reserve as script keys and arguments, and how its reply becomes a result. */
export interface ReserveCall {
  keys: string[];
  args: string[];
  result(raw: unknown): ReserveResult;
}

/** The micro-dollars a settle of `actualUsd` charges (never negative, never above the ceiling). */
export const settleMicros = (actualUsd: number): number => chargeMicros(actualUsd);

/** What a settle needs of a reservation (a direct charge makes one up). */
export type SettleTarget = KeyRef & {
  id: string;
  periodKey: string;
  limitUsd: number;
  periodRetentionMs: number | undefined;
};

/** One settle as script keys and arguments, and how its reply becomes a result. */
export interface SettleCall {
  keys: string[];
  args: string[];
  result(raw: unknown): SettleResult;
}

export class RedisBudgetStore implements BudgetStore {
  private readonly reserveScript: BoundScript;
  private readonly settleScript: BoundScript;
  private readonly stateScript: BoundScript;
  private readonly retainScript: BoundScript;
  private readonly ttlMs: number;
  private readonly settledMemoryMs: number;
  private readonly ledgerMaxEntries: number;

  constructor(
    private readonly client: Redis,
    private readonly keys: KeySpace,
    private readonly clock: Clock = systemClock,
    opts: BudgetStoreOptions = {},
  ) {
    this.reserveScript = bindScript(client, budgetReserve, 'budget.reserve');
    this.settleScript = bindScript(client, budgetSettle, 'budget.settle');
    this.stateScript = bindScript(client, budgetState, 'budget.state');
    this.retainScript = bindScript(client, budgetRetain, 'budget.retain');
    this.ttlMs = opts.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.settledMemoryMs = opts.settledMemoryMs ?? DEFAULT_SETTLED_MEMORY_MS;
    this.ledgerMaxEntries = opts.ledgerMaxEntries ?? DEFAULT_LEDGER_MAX_ENTRIES;
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const call = this.reserveCall(req);
    return call.result(await this.reserveScript(call.keys, call.args));
  }

  reserveCall(req: ReserveRequest): ReserveCall {
    const now = Math.floor(this.clock());
    const p = this.plan(req, now);
    const r = p.recharge;
    return {
      keys: [
        this.keys.budget(req),
        this.keys.spent(req, p.periodKey),
        this.keys.reservations(req),
        this.keys.reservationExpiry(req),
        this.keys.recharged(req, monthKey(now)),
        this.keys.wallet(req.tenant),
        this.keys.ledger(req.tenant),
      ],
      args: [
        arg(now),
        arg(p.limit),
        arg(p.estimate),
        p.id,
        arg(p.expiresAt),
        arg(p.retention ?? 0),
        r ? '1' : '0',
        arg(r?.thresholdMicros ?? 0),
        arg(r?.amountMicros ?? 0),
        arg(r?.monthlyCapMicros ?? 0),
        arg(MONTH_RETENTION_MS),
        req.keyId,
        req.reference ?? '',
        arg(this.ledgerMaxEntries),
      ],
      result: (raw) => this.reserved(raw, req, p),
    };
  }

  /**
   * The hold's part of the admission script (lua/admit.ts): its budget keys and arguments, the
   * auto-recharge ones only when the key recharges. `now` is the admission's, shared with the
   * rate limit.
   */
  admissionCall(req: ReserveRequest, now: number): ReserveCall {
    const p = this.plan(req, now);
    const keys = [
      this.keys.budget(req),
      this.keys.spent(req, p.periodKey),
      this.keys.reservations(req),
      this.keys.reservationExpiry(req),
    ];
    const args = [arg(p.limit), arg(p.estimate), p.id, arg(p.expiresAt)];
    const r = p.recharge;
    if (r) {
      keys.push(
        this.keys.recharged(req, monthKey(now)),
        this.keys.wallet(req.tenant),
        this.keys.ledger(req.tenant),
      );
      args.push(
        arg(r.thresholdMicros),
        arg(r.amountMicros),
        arg(r.monthlyCapMicros),
        arg(MONTH_RETENTION_MS),
        req.keyId,
        req.reference ?? '',
        arg(this.ledgerMaxEntries),
      );
    }
    return { keys, args, result: (raw) => this.reserved(raw, req, p) };
  }

  /** What a hold of `req` at `now` is: its period, amounts, id and expiry. */
  private plan(req: ReserveRequest, now: number): HoldPlan {
    const window = periodWindow(req.budget.period, now);
    return {
      periodKey: window.key,
      limit: toMicros(req.budget.limitUsd),
      estimate: Math.max(0, toMicros(req.estimateUsd, 'up')),
      recharge: req.autoRecharge ? rechargeMicros(req.autoRecharge) : undefined,
      id: newId(),
      expiresAt: now + this.ttlMs,
      retention: periodRetentionMs(window, now),
    };
  }

  private reserved(raw: unknown, req: ReserveRequest, p: HoldPlan): ReserveResult {
    const [ok, avail, recharged] = triple(raw, 'budget reserve');
    if (ok !== 1) {
      return { ok: false, remainingUsd: fromMicros(Math.max(0, avail)), rechargedUsd: fromMicros(recharged) };
    }
    const reservation: Reservation = {
      tenant: req.tenant,
      keyId: req.keyId,
      id: p.id,
      periodKey: p.periodKey,
      limitUsd: fromMicros(p.limit),
      amountUsd: fromMicros(p.estimate),
      expiresAt: p.expiresAt,
      periodRetentionMs: p.retention,
    };
    return { ok: true, reservation, remainingUsd: fromMicros(avail), rechargedUsd: fromMicros(recharged) };
  }

  private async apply(r: SettleTarget, amount: number, rememberMs?: number): Promise<SettleResult> {
    const call = this.settleCall(r, amount, rememberMs);
    return call.result(await this.settleScript(call.keys, call.args));
  }

  /** One settle (release when `amount` is 0) as script keys and arguments, and how its reply reads. */
  settleCall(r: SettleTarget, amount: number, rememberMs = this.settledMemoryMs): SettleCall {
    return {
      keys: [
        this.keys.budget(r),
        this.keys.spent(r, r.periodKey),
        this.keys.reservations(r),
        this.keys.reservationExpiry(r),
        this.keys.settled(r, r.id),
      ],
      args: [
        r.id,
        arg(amount),
        arg(toMicros(r.limitUsd)),
        arg(r.periodRetentionMs ?? 0),
        arg(rememberMs),
        arg(Math.floor(this.clock())),
      ],
      result: (raw) => {
        const [applied, charged, avail] = triple(raw, 'budget settle');
        return {
          applied: applied === 1,
          chargedUsd: fromMicros(charged),
          remainingUsd: fromMicros(Math.max(0, avail)),
        };
      },
    };
  }

  async settle(reservation: Reservation, actualUsd: number): Promise<SettleResult> {
    return this.apply(reservation, settleMicros(actualUsd));
  }

  async release(reservation: Reservation): Promise<SettleResult> {
    return this.apply(reservation, 0);
  }

  async charge(req: ChargeRequest): Promise<SettleResult> {
    const target = chargeTarget({ ...req, id: req.id ?? newId() }, Math.floor(this.clock()));
    return this.apply(target, chargeMicros(req.amountUsd), req.rememberMs);
  }

  async retain(reservation: Reservation, holdId: string, ttlMs: number): Promise<boolean> {
    const now = Math.floor(this.clock());
    const raw = await this.retainScript(
      [
        this.keys.budget(reservation),
        this.keys.reservations(reservation),
        this.keys.reservationExpiry(reservation),
        this.keys.settled(reservation, holdId),
      ],
      [reservation.id, holdId, arg(toMicros(reservation.amountUsd, 'up')), arg(now + ttlMs), arg(now)],
    );
    return int(raw, 'budget retain') === 1;
  }

  async heldForWork(key: KeyRef): Promise<WorkHeld> {
    // A request's reservation expires within the reservation TTL; a retained hold, after days:
    // the holds past it are found by the expiry index alone, then their amounts.
    const from = Math.floor(this.clock()) + this.ttlMs;
    const fail = (err: unknown): never => {
      throw toStoreError('budget.heldForWork', err);
    };
    // One more than summed, to know whether there were more.
    const ids = await this.client
      .zrangebyscore(this.keys.reservationExpiry(key), `(${from}`, '+inf', 'LIMIT', 0, WORK_HOLDS_SUMMED + 1)
      .catch(fail);
    if (ids.length === 0) return { usd: 0, partial: false };
    const partial = ids.length > WORK_HOLDS_SUMMED;
    const summed = partial ? ids.slice(0, WORK_HOLDS_SUMMED) : ids;
    const amounts = await this.client.hmget(this.keys.reservations(key), ...summed).catch(fail);
    return { usd: fromMicros(amounts.reduce((sum, v) => sum + (v === null ? 0 : Number(v)), 0)), partial };
  }

  async state(key: KeyRef, budget: BudgetLimit): Promise<BudgetState> {
    const now = Math.floor(this.clock());
    const window = periodWindow(budget.period, now);
    const raw = await this.stateScript(
      [
        this.keys.budget(key),
        this.keys.spent(key, window.key),
        this.keys.reservations(key),
        this.keys.reservationExpiry(key),
        this.keys.recharged(key, monthKey(now)),
      ],
      [arg(now)],
    );
    if (!Array.isArray(raw) || raw.length !== 4) throw new Error('budget state script: unexpected reply');
    const [spent, credit, held, recharged] = raw.map((v, i) => int(v, `state[${i}]`)) as [
      number,
      number,
      number,
      number,
    ];
    const limit = toMicros(budget.limitUsd);
    return {
      periodKey: window.key,
      limitUsd: fromMicros(limit),
      spentUsd: fromMicros(spent),
      creditUsd: fromMicros(credit),
      heldUsd: fromMicros(held),
      remainingUsd: fromMicros(available({ limit, spent, credit, held })),
      rechargedThisMonthUsd: fromMicros(recharged),
    };
  }
}
