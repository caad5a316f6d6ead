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
import { available, fits, splitCharge } from '../budget-math.ts';
import { newId } from '../ids.ts';
import { chargeMicros, fromMicros, toMicros } from '../money.ts';
import { monthKey, periodRetentionMs, periodWindow } from '../period.ts';
import { rechargeForHold, rechargeMicros } from '../recharge.ts';
import { systemClock, type Clock, type KeyRef } from '../types.ts';
import type { MemoryKeyBudget, MemoryState } from './state.ts';

export class MemoryBudgetStore implements BudgetStore {
  private readonly ttlMs: number;
  private readonly settledMemoryMs: number;

  constructor(
    private readonly mem: MemoryState,
    private readonly clock: Clock = systemClock,
    opts: BudgetStoreOptions = {},
  ) {
    this.ttlMs = opts.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.settledMemoryMs = opts.settledMemoryMs ?? DEFAULT_SETTLED_MEMORY_MS;
  }

  /** Drops holds whose reservation expired (the pod that made them is presumed gone). */
  private expireHolds(b: MemoryKeyBudget, now: number): void {
    // Holds of long-running work (retain) stay for days beside the requests in flight: the
    // scan runs only once the earliest expiry may have passed, not on every reservation.
    if (now < b.nextExpiry) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [id, r] of b.reservations) {
      if (r.expiresAt <= now) {
        b.held -= r.amount;
        b.reservations.delete(id);
      } else if (r.expiresAt < next) next = r.expiresAt;
    }
    b.nextExpiry = next;
    if (b.reservations.size === 0 || b.held < 0) b.held = 0;
  }

  private hold(b: MemoryKeyBudget, id: string, amount: number, expiresAt: number): void {
    b.reservations.set(id, { amount, expiresAt });
    b.held += amount;
    if (expiresAt < b.nextExpiry) b.nextExpiry = expiresAt;
  }

  private forgetSettled(b: MemoryKeyBudget, now: number): void {
    for (const map of [b.settled, b.settledLong])
      for (const [id, until] of map) {
        if (until > now) break;
        map.delete(id);
      }
  }

  /** Whether `id` was settled (and is still remembered). */
  private isSettled(b: MemoryKeyBudget, id: string, now: number): boolean {
    if (b.settled.has(id)) return true;
    const until = b.settledLong.get(id);
    return until !== undefined && until > now;
  }

  /**
   * Remembers a settled id. Ids kept longer than the default (long-running work) go to a map
   * of their own, so each map stays in expiry order and is pruned from its front.
   */
  private remember(b: MemoryKeyBudget, id: string, now: number, rememberMs: number): void {
    if (rememberMs <= this.settledMemoryMs) b.settled.set(id, now + rememberMs);
    else b.settledLong.set(id, now + rememberMs);
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = this.clock();
    const window = periodWindow(req.budget.period, now);
    const limit = toMicros(req.budget.limitUsd);
    const estimate = Math.max(0, toMicros(req.estimateUsd, 'up'));
    const b = this.mem.budget(req.tenant, req.keyId);
    this.expireHolds(b, now);
    let avail = available({ limit, spent: b.spent.get(window.key) ?? 0, credit: b.credit, held: b.held });

    let recharged = 0;
    if (req.autoRecharge) {
      const policy = rechargeMicros(req.autoRecharge);
      const month = monthKey(now);
      const wallet = this.mem.wallet(req.tenant);
      recharged = rechargeForHold({
        ...policy,
        availableMicros: avail,
        estimateMicros: estimate,
        rechargedThisMonthMicros: b.rechargedByMonth.get(month) ?? 0,
        walletMicros: wallet.balance,
      });
      if (recharged > 0) {
        b.credit += recharged;
        b.rechargedByMonth.set(month, (b.rechargedByMonth.get(month) ?? 0) + recharged);
        this.mem.appendLedger(wallet, now, 'recharge', -recharged, req.keyId, req.reference);
        avail += recharged;
      }
    }

    if (!fits(avail, estimate)) {
      return { ok: false, remainingUsd: fromMicros(Math.max(0, avail)), rechargedUsd: fromMicros(recharged) };
    }
    const id = newId();
    const expiresAt = now + this.ttlMs;
    this.hold(b, id, estimate, expiresAt);
    const reservation: Reservation = {
      tenant: req.tenant,
      keyId: req.keyId,
      id,
      periodKey: window.key,
      limitUsd: fromMicros(limit),
      amountUsd: fromMicros(estimate),
      expiresAt,
      periodRetentionMs: periodRetentionMs(window, now),
    };
    return {
      ok: true,
      reservation,
      remainingUsd: fromMicros(avail - estimate),
      rechargedUsd: fromMicros(recharged),
    };
  }

  /** One code path for settle, release and charge, as in the Redis script. */
  private apply(
    r: KeyRef & { id: string; periodKey: string; limitUsd: number },
    amount: number,
    rememberMs = this.settledMemoryMs,
  ): SettleResult {
    const now = this.clock();
    const b = this.mem.budget(r.tenant, r.keyId);
    this.forgetSettled(b, now);
    const limit = toMicros(r.limitUsd);
    const remaining = () =>
      fromMicros(
        Math.max(
          0,
          available({ limit, spent: b.spent.get(r.periodKey) ?? 0, credit: b.credit, held: b.held }),
        ),
      );
    if (this.isSettled(b, r.id, now)) return { applied: false, chargedUsd: 0, remainingUsd: remaining() };

    const hold = b.reservations.get(r.id);
    if (hold) {
      b.reservations.delete(r.id);
      b.held = b.reservations.size === 0 ? 0 : Math.max(0, b.held - hold.amount);
    }
    if (amount > 0) {
      const spentBefore = b.spent.get(r.periodKey) ?? 0;
      const { fromCredit } = splitCharge(limit, spentBefore, b.credit, amount);
      b.spent.set(r.periodKey, spentBefore + amount);
      b.credit -= fromCredit;
    }
    this.remember(b, r.id, now, rememberMs);
    return { applied: true, chargedUsd: fromMicros(amount), remainingUsd: remaining() };
  }

  async settle(reservation: Reservation, actualUsd: number): Promise<SettleResult> {
    return this.apply(reservation, chargeMicros(actualUsd));
  }

  async release(reservation: Reservation): Promise<SettleResult> {
    return this.apply(reservation, 0);
  }

  async charge(req: ChargeRequest): Promise<SettleResult> {
    const window = periodWindow(req.budget.period, this.clock());
    return this.apply(
      {
        tenant: req.tenant,
        keyId: req.keyId,
        id: req.id ?? newId(),
        periodKey: window.key,
        limitUsd: req.budget.limitUsd,
      },
      chargeMicros(req.amountUsd),
      req.rememberMs,
    );
  }

  async heldForWork(key: KeyRef): Promise<WorkHeld> {
    const b = this.mem.budgets.get(JSON.stringify([key.tenant, key.keyId]));
    if (!b) return { usd: 0, partial: false };
    // A request's reservation expires within the reservation TTL; a retained hold, after days.
    // As many holds are summed as Redis sums (WORK_HOLDS_SUMMED), so both stores say the same.
    const requestsUntil = this.clock() + this.ttlMs;
    let micros = 0;
    let summed = 0;
    for (const r of b.reservations.values()) {
      if (r.expiresAt <= requestsUntil) continue;
      if (summed === WORK_HOLDS_SUMMED) return { usd: fromMicros(micros), partial: true };
      micros += r.amount;
      summed++;
    }
    return { usd: fromMicros(micros), partial: false };
  }

  async retain(reservation: Reservation, holdId: string, ttlMs: number): Promise<boolean> {
    const now = this.clock();
    const b = this.mem.budget(reservation.tenant, reservation.keyId);
    this.expireHolds(b, now);
    this.forgetSettled(b, now);
    const drop = (id: string) => {
      const hold = b.reservations.get(id);
      if (!hold) return;
      b.reservations.delete(id);
      b.held = Math.max(0, b.held - hold.amount);
    };
    drop(reservation.id);
    const kept = !this.isSettled(b, holdId, now);
    if (kept) {
      drop(holdId);
      this.hold(b, holdId, toMicros(reservation.amountUsd, 'up'), now + ttlMs);
    }
    if (b.reservations.size === 0) b.held = 0;
    return kept;
  }

  async state(key: KeyRef, budget: BudgetLimit): Promise<BudgetState> {
    const now = this.clock();
    const window = periodWindow(budget.period, now);
    const b = this.mem.budget(key.tenant, key.keyId);
    this.expireHolds(b, now);
    const limit = toMicros(budget.limitUsd);
    const spent = b.spent.get(window.key) ?? 0;
    return {
      periodKey: window.key,
      limitUsd: fromMicros(limit),
      spentUsd: fromMicros(spent),
      creditUsd: fromMicros(b.credit),
      heldUsd: fromMicros(b.held),
      remainingUsd: fromMicros(available({ limit, spent, credit: b.credit, held: b.held })),
      rechargedThisMonthUsd: fromMicros(b.rechargedByMonth.get(monthKey(now)) ?? 0),
    };
  }
}
