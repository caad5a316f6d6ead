/**
 * A tenant's in-process ledger, bounded like the Redis stream: the newest `maxEntries` entries
 * are kept (trimmed in batches, ledgerTrimCount), and what the trim takes out is summed beside
 * them, so the ledger still accounts for the whole balance (trimmed sum + the kept entries'
 * sum) without keeping every entry for ever.
 */
import { ledgerTrimCount, type LedgerKind } from '../wallet.ts';

export interface MemoryLedgerEntry {
  id: string;
  at: number;
  kind: LedgerKind;
  amount: number;
  balance: number;
  keyId: string | undefined;
  reference: string | undefined;
}

/** Compares two `<ms>-<seq>` ids. */
export function compareLedgerIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** Trimmed entries are cut off in one splice once they are this many and half the array. */
const SPLICE_AT = 1024;

export class MemoryLedger {
  /** Oldest first; the kept ones start at `head` (dropping from an array's front one by one is O(n)). */
  private entries: MemoryLedgerEntry[] = [];
  private head = 0;
  /** Sum (µ$) and number of the entries trimmed so far. */
  trimmedMicros = 0;
  trimmedCount = 0;

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.entries.length - this.head;
  }

  push(entry: MemoryLedgerEntry): void {
    this.entries.push(entry);
    for (let n = ledgerTrimCount(this.size, this.maxEntries); n > 0; n--) {
      this.trimmedMicros += this.entries[this.head]!.amount;
      this.trimmedCount++;
      this.head++;
    }
    if (this.head >= SPLICE_AT && this.head * 2 >= this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }

  /** The kept entries strictly after `after` (all when absent), oldest first, at most `limit`. */
  page(after: string | undefined, limit = Number.POSITIVE_INFINITY): MemoryLedgerEntry[] {
    let from = this.head;
    if (after !== undefined) from = this.firstAbove(after, from);
    return this.entries.slice(from, Number.isFinite(limit) ? from + limit : undefined);
  }

  /** The kept entry with this id (ids ascend: a binary search). */
  find(id: string): MemoryLedgerEntry | undefined {
    const i = this.firstAbove(id, this.head) - 1;
    const e = i >= this.head ? this.entries[i] : undefined;
    return e?.id === id ? e : undefined;
  }

  /** Sum (µ$) of the kept entries' amounts. */
  keptMicros(): number {
    let sum = 0;
    for (let i = this.head; i < this.entries.length; i++) sum += this.entries[i]!.amount;
    return sum;
  }

  /** Index of the first kept entry whose id is above `id`. */
  private firstAbove(id: string, lo: number): number {
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareLedgerIds(this.entries[mid]!.id, id) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
