/**
 * The auto-recharge decision: when a reservation would leave a key below its threshold, move
 * whole `amount`s from the tenant wallet to the key's credit, as many as needed to end at or
 * above the threshold, bounded by the monthly cap and by what the wallet holds (it never goes
 * negative). A recharge is only made for a reservation it lets through: a request the budget
 * refuses anyway moves nothing (the money would sit on one key where the tenant's other keys
 * cannot reach it). Mirrored by the reserve Lua script (budgetHold in redis/lua/steps.ts).
 */
import { fits } from './budget-math.ts';
import { toMicros } from './money.ts';

export interface AutoRechargePolicy {
  thresholdUsd: number;
  amountUsd: number;
  monthlyCapUsd: number;
}

export interface RechargeInput {
  availableMicros: number;
  estimateMicros: number;
  thresholdMicros: number;
  amountMicros: number;
  monthlyCapMicros: number;
  rechargedThisMonthMicros: number;
  walletMicros: number;
}

/** Number of `amount`s to move (0 for none). */
export function planRecharge(i: RechargeInput): number {
  if (i.amountMicros <= 0) return 0;
  const after = i.availableMicros - i.estimateMicros;
  if (after >= i.thresholdMicros) return 0;
  const needed = Math.ceil((i.thresholdMicros - after) / i.amountMicros);
  const capRoom = Math.floor(Math.max(0, i.monthlyCapMicros - i.rechargedThisMonthMicros) / i.amountMicros);
  const walletRoom = Math.floor(Math.max(0, i.walletMicros) / i.amountMicros);
  return Math.max(0, Math.min(needed, capRoom, walletRoom));
}

/**
 * Micro-dollars to move for this reservation: planRecharge's amounts when the hold then fits,
 * else 0 (the refusal writes nothing).
 */
export function rechargeForHold(i: RechargeInput): number {
  const moved = planRecharge(i) * i.amountMicros;
  return moved > 0 && fits(i.availableMicros + moved, i.estimateMicros) ? moved : 0;
}

export interface RechargeMicros {
  thresholdMicros: number;
  amountMicros: number;
  monthlyCapMicros: number;
}

/** The policy in micro-dollars (amounts rounded to the nearest µ$). */
export function rechargeMicros(p: AutoRechargePolicy): RechargeMicros {
  return {
    thresholdMicros: toMicros(p.thresholdUsd),
    amountMicros: toMicros(p.amountUsd),
    monthlyCapMicros: toMicros(p.monthlyCapUsd),
  };
}
