/**
 * The in-process backing state. Several store objects may share one (as pods share a Redis),
 * which the behavioural tests use; a data plane creates one per process. Every operation runs
 * synchronously between awaits, so each is atomic like a Redis script.
 */
import { DEFAULT_LEDGER_MAX_ENTRIES, type LedgerKind } from '../wallet.ts';
import { ExpiringIds } from './expiring-ids.ts';
import { MemoryLedger, type MemoryLedgerEntry } from './ledger.ts';

export interface MemoryRateEntry {
  id: string;
  at: number;
  tokens: number;
}

export interface MemoryRateWindow {
  /**
   * Oldest first; the live ones start at `head`. Expired entries are skipped by moving `head`
   * and cut off in one splice once they are half the array: dropping one entry per request
   * from the front of a 100k-entry array (a busy key's minute) cost ~40 µs a request.
   */
  entries: MemoryRateEntry[];
  head: number;
  /** The same entries by ticket id: an adjustment finds its entry without a scan. */
  byId: Map<string, MemoryRateEntry>;
  tokens: number;
}

export interface MemoryKeyBudget {
  credit: number;
  held: number;
  reservations: Map<string, { amount: number; expiresAt: number }>;
  /** No reservation expires before this (ms); may be earlier than the earliest left. */
  nextExpiry: number;
  spent: Map<string, number>;
  rechargedByMonth: Map<string, number>;
  /** Settled ids → when they may be forgotten; insertion order is time order. */
  settled: Map<string, number>;
  /** The same for ids remembered longer than the store's default (settled batches and jobs). */
  settledLong: Map<string, number>;
}

export interface MemoryWallet {
  balance: number;
  configured: number | undefined;
  ledger: MemoryLedger;
  /** idempotency key → the id of the entry it booked, for a day */
  idempotency: ExpiringIds<string>;
  lastIdMs: number;
  lastIdSeq: number;
}

export interface MemoryStateOptions {
  /** Ledger entries kept per tenant (DEFAULT_LEDGER_MAX_ENTRIES). */
  ledgerMaxEntries?: number | undefined;
}

export class MemoryState {
  private readonly ledgerMaxEntries: number;

  constructor(opts: MemoryStateOptions = {}) {
    this.ledgerMaxEntries = opts.ledgerMaxEntries ?? DEFAULT_LEDGER_MAX_ENTRIES;
  }

  readonly rateWindows = new Map<string, MemoryRateWindow>();
  readonly budgets = new Map<string, MemoryKeyBudget>();
  readonly wallets = new Map<string, MemoryWallet>();

  budget(tenant: string, keyId: string): MemoryKeyBudget {
    const k = JSON.stringify([tenant, keyId]);
    let b = this.budgets.get(k);
    if (!b) {
      b = {
        credit: 0,
        held: 0,
        reservations: new Map(),
        nextExpiry: Number.POSITIVE_INFINITY,
        spent: new Map(),
        rechargedByMonth: new Map(),
        settled: new Map(),
        settledLong: new Map(),
      };
      this.budgets.set(k, b);
    }
    return b;
  }

  wallet(tenant: string): MemoryWallet {
    let w = this.wallets.get(tenant);
    if (!w) {
      w = {
        balance: 0,
        configured: undefined,
        ledger: new MemoryLedger(this.ledgerMaxEntries),
        idempotency: new ExpiringIds(),
        lastIdMs: 0,
        lastIdSeq: 0,
      };
      this.wallets.set(tenant, w);
    }
    return w;
  }

  /** Appends a ledger entry with a stream-style id (`<ms>-<seq>`, monotonic even if the clock steps back). */
  appendLedger(
    w: MemoryWallet,
    at: number,
    kind: LedgerKind,
    amount: number,
    keyId: string | undefined,
    reference: string | undefined,
  ): MemoryLedgerEntry {
    const ms = Math.max(Math.floor(at), w.lastIdMs);
    const seq = ms === w.lastIdMs ? w.lastIdSeq + 1 : 0;
    w.lastIdMs = ms;
    w.lastIdSeq = seq;
    w.balance += amount;
    const entry: MemoryLedgerEntry = {
      id: `${ms}-${seq}`,
      at,
      kind,
      amount,
      balance: w.balance,
      keyId,
      reference,
    };
    w.ledger.push(entry);
    return entry;
  }
}

export { compareLedgerIds, type MemoryLedgerEntry } from './ledger.ts';
