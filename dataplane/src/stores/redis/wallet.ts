import type { Redis } from 'ioredis';
import { fromMicros, toMicros } from '../money.ts';
import { systemClock, type Clock } from '../types.ts';
import {
  DEFAULT_LEDGER_MAX_ENTRIES,
  LedgerKinds,
  signedMovement,
  type LedgerEntry,
  type LedgerKind,
  type MoveResult,
  type Movement,
  type RebuildResult,
  type WalletStore,
} from '../wallet.ts';
import { toStoreError } from './client.ts';
import type { KeySpace } from './keys.ts';
import { walletMove, walletRebuildTail, walletSyncConfigured } from './lua/wallet.ts';
import { arg, bindScript, int, type BoundScript } from './script.ts';

const IDEMPOTENCY_MS = 24 * 3_600_000;
const REBUILD_CHUNK = 1000;
/** Reads of the ledger a rebuild makes before giving up on a ledger trimmed faster than it reads. */
const REBUILD_ATTEMPTS = 5;

function fieldMap(fields: unknown): Map<string, string> {
  const map = new Map<string, string>();
  if (!Array.isArray(fields)) return map;
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(String(fields[i]), String(fields[i + 1]));
  return map;
}

const isKind = (k: string | undefined): k is LedgerKind => LedgerKinds.includes(k as LedgerKind);
const optional = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);

/** A stream entry (`[id, [field, value, ...]]` fields) as a ledger entry. */
export function parseLedgerEntry(id: string, fields: unknown): LedgerEntry {
  const f = fieldMap(fields);
  const kind = f.get('kind');
  if (!isKind(kind)) throw new Error(`ledger entry ${id} has unknown kind ${kind}`);
  return {
    id,
    at: Number(f.get('at') ?? 0),
    kind,
    amountUsd: fromMicros(Number(f.get('amount') ?? 0)),
    balanceUsd: fromMicros(Number(f.get('balance') ?? 0)),
    keyId: optional(f.get('keyId')),
    reference: optional(f.get('ref')),
  };
}

export class RedisWalletStore implements WalletStore {
  private readonly moveScript: BoundScript;
  private readonly syncScript: BoundScript;
  private readonly rebuildScript: BoundScript;

  private readonly maxEntries: number;

  constructor(
    private readonly client: Redis,
    private readonly keys: KeySpace,
    private readonly clock: Clock = systemClock,
    ledgerMaxEntries: number = DEFAULT_LEDGER_MAX_ENTRIES,
  ) {
    this.maxEntries = ledgerMaxEntries;
    this.moveScript = bindScript(client, walletMove, 'wallet.move');
    this.syncScript = bindScript(client, walletSyncConfigured, 'wallet.syncConfigured');
    this.rebuildScript = bindScript(client, walletRebuildTail, 'wallet.rebuildBalance');
  }

  private async read<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw toStoreError(operation, err);
    }
  }

  async balance(tenant: string): Promise<number> {
    const raw = await this.read('wallet.balance', () =>
      this.client.hget(this.keys.wallet(tenant), 'balance'),
    );
    return fromMicros(Number(raw ?? 0));
  }

  private async move(
    tenant: string,
    kind: LedgerKind,
    amount: number,
    m: Movement,
    allowNegative: boolean,
  ): Promise<MoveResult> {
    const now = Math.floor(this.clock());
    const idem = m.idempotencyKey;
    const raw = await this.moveScript(
      [this.keys.wallet(tenant), this.keys.ledger(tenant), this.keys.walletIdempotency(tenant, idem ?? '')],
      [
        arg(amount),
        kind,
        allowNegative ? '1' : '0',
        arg(now),
        m.keyId ?? '',
        m.reference ?? '',
        idem === undefined ? '0' : '1',
        arg(IDEMPOTENCY_MS),
        arg(this.maxEntries),
      ],
    );
    if (!Array.isArray(raw)) throw new Error('wallet move script: unexpected reply');
    const status = int(raw[0], 'status');
    if (status === 0) return { ok: false, balanceUsd: fromMicros(int(raw[1], 'balance')) };
    const id = String(raw[1]);
    if (status === 2) return { ok: true, entry: parseLedgerEntry(id, raw[2]), duplicate: true };
    if (status === 3) return { ok: true, entry: undefined, duplicate: true };
    const entry: LedgerEntry = {
      id,
      at: now,
      kind,
      amountUsd: fromMicros(amount),
      balanceUsd: fromMicros(int(raw[2], 'balance')),
      keyId: optional(m.keyId),
      reference: optional(m.reference),
    };
    return { ok: true, entry, duplicate: false };
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
    const now = Math.floor(this.clock());
    const raw = await this.syncScript(
      [this.keys.wallet(tenant), this.keys.ledger(tenant)],
      [arg(toMicros(configuredUsd)), arg(now), arg(this.maxEntries)],
    );
    if (!Array.isArray(raw)) throw new Error('wallet sync script: unexpected reply');
    if (int(raw[0], 'status') === 0) return undefined;
    const delta = int(raw[3], 'delta');
    return {
      id: String(raw[1]),
      at: now,
      kind: delta > 0 ? 'topup' : 'adjustment',
      amountUsd: fromMicros(delta),
      balanceUsd: fromMicros(int(raw[2], 'balance')),
      keyId: undefined,
      reference: 'config',
    };
  }

  async ledger(tenant: string, opts: { after?: string; limit?: number } = {}): Promise<LedgerEntry[]> {
    const start = opts.after === undefined ? '-' : `(${opts.after}`;
    const rows = await this.read('wallet.ledger', () =>
      opts.limit === undefined
        ? this.client.xrange(this.keys.ledger(tenant), start, '+')
        : this.client.xrange(this.keys.ledger(tenant), start, '+', 'COUNT', opts.limit),
    );
    return rows.map(([id, fields]) => parseLedgerEntry(id, fields));
  }

  async rebuildBalance(tenant: string): Promise<RebuildResult> {
    for (let attempt = 0; attempt < REBUILD_ATTEMPTS; attempt++) {
      const result = await this.tryRebuild(tenant);
      if (result) return result;
    }
    throw new Error(
      `wallet rebuild of ${tenant}: the ledger was trimmed faster than it could be read; try again`,
    );
  }

  /** One rebuild; undefined when entries were trimmed before it read them. */
  private async tryRebuild(tenant: string): Promise<RebuildResult | undefined> {
    const wallet = this.keys.wallet(tenant);
    const ledger = this.keys.ledger(tenant);
    // The trimmed sum and count are read with the first chunk, so they are exactly the entries before it.
    const first = await this.read('wallet.rebuildBalance', () =>
      this.client
        .multi()
        .hmget(wallet, 'trimmed', 'trimmedCount')
        .xrange(ledger, '-', '+', 'COUNT', REBUILD_CHUNK)
        .exec(),
    );
    const [trimmed, chunk] = first ?? [];
    if (!trimmed || !chunk || trimmed[0] || chunk[0])
      throw new Error('wallet rebuild: the first read failed');
    const [trimmedSum, trimmedCount] = trimmed[1] as (string | null)[];
    let rows = chunk[1] as [string, string[]][];
    // Sum the bulk in chunks without blocking Redis, then let one script add the tail and write.
    let sum = Number(trimmedSum ?? 0);
    let entries = 0;
    let last = '';
    for (;;) {
      for (const [id, fields] of rows) {
        sum += Number(fieldMap(fields).get('amount') ?? 0);
        last = id;
      }
      entries += rows.length;
      if (rows.length < REBUILD_CHUNK) break;
      const start = `(${last}`;
      rows = await this.read('wallet.rebuildBalance', () =>
        this.client.xrange(ledger, start, '+', 'COUNT', REBUILD_CHUNK),
      );
    }
    const raw = await this.rebuildScript(
      [wallet, ledger],
      [last, arg(sum), arg(Number(trimmedCount ?? 0) + entries)],
    );
    if (!Array.isArray(raw)) throw new Error('wallet rebuild script: unexpected reply');
    if (int(raw[0], 'status') === 0) return undefined;
    return {
      balanceUsd: fromMicros(int(raw[1], 'balance')),
      previousUsd: fromMicros(int(raw[2], 'previous')),
      entries: entries + int(raw[3], 'tail'),
    };
  }
}
