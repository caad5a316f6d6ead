import { fromMicros, toMicros } from '../money.ts';
import { systemClock, type Clock } from '../types.ts';
import {
  signedMovement,
  type LedgerEntry,
  type LedgerKind,
  type MoveResult,
  type Movement,
  type RebuildResult,
  type WalletStore,
} from '../wallet.ts';
import type { MemoryLedgerEntry } from './ledger.ts';
import type { MemoryState, MemoryWallet } from './state.ts';

const IDEMPOTENCY_MS = 24 * 3_600_000;

export function toLedgerEntry(e: MemoryLedgerEntry): LedgerEntry {
  return {
    id: e.id,
    at: e.at,
    kind: e.kind,
    amountUsd: fromMicros(e.amount),
    balanceUsd: fromMicros(e.balance),
    keyId: e.keyId,
    reference: e.reference,
  };
}

export class MemoryWalletStore implements WalletStore {
  constructor(
    private readonly mem: MemoryState,
    private readonly clock: Clock = systemClock,
  ) {}

  async balance(tenant: string): Promise<number> {
    return fromMicros(this.mem.wallet(tenant).balance);
  }

  private move(
    tenant: string,
    kind: LedgerKind,
    amount: number,
    m: Movement,
    allowNegative: boolean,
  ): MoveResult {
    const now = this.clock();
    const w: MemoryWallet = this.mem.wallet(tenant);
    w.idempotency.sweep(now);
    if (m.idempotencyKey !== undefined) {
      const prior = w.idempotency.get(m.idempotencyKey, now);
      // The ledger may have trimmed the entry since: still a repeat, never applied twice.
      if (prior !== undefined) {
        const entry = w.ledger.find(prior);
        return { ok: true, entry: entry && toLedgerEntry(entry), duplicate: true };
      }
    }
    if (amount < 0 && !allowNegative && w.balance + amount < 0)
      return { ok: false, balanceUsd: fromMicros(w.balance) };
    const entry = this.mem.appendLedger(w, now, kind, amount, m.keyId, m.reference);
    if (m.idempotencyKey !== undefined) w.idempotency.set(m.idempotencyKey, entry.id, now + IDEMPOTENCY_MS);
    return { ok: true, entry: toLedgerEntry(entry), duplicate: false };
  }

  async credit(
    tenant: string,
    kind: 'topup' | 'cache_credit' | 'adjustment',
    m: Movement,
  ): Promise<MoveResult> {
    const { micros, overdraw } = signedMovement('credit', m);
    return this.move(tenant, kind, micros, m, overdraw);
  }

  async debit(
    tenant: string,
    kind: 'debit' | 'adjustment',
    m: Movement & { allowNegative?: boolean },
  ): Promise<MoveResult> {
    const { micros, overdraw } = signedMovement('debit', m);
    return this.move(tenant, kind, micros, m, overdraw);
  }

  async syncConfigured(tenant: string, configuredUsd: number): Promise<LedgerEntry | undefined> {
    const w = this.mem.wallet(tenant);
    const target = toMicros(configuredUsd);
    const delta = target - (w.configured ?? 0);
    w.configured = target;
    if (delta === 0) return undefined;
    const kind = delta > 0 ? 'topup' : 'adjustment';
    return toLedgerEntry(this.mem.appendLedger(w, this.clock(), kind, delta, undefined, 'config'));
  }

  async ledger(tenant: string, opts: { after?: string; limit?: number } = {}): Promise<LedgerEntry[]> {
    return this.mem.wallet(tenant).ledger.page(opts.after, opts.limit).map(toLedgerEntry);
  }

  async rebuildBalance(tenant: string): Promise<RebuildResult> {
    const w = this.mem.wallet(tenant);
    const previous = w.balance;
    w.balance = w.ledger.trimmedMicros + w.ledger.keptMicros();
    return { balanceUsd: fromMicros(w.balance), previousUsd: fromMicros(previous), entries: w.ledger.size };
  }
}
