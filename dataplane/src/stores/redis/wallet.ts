import type { Redis } from 'ioredis';
import { fromMicros, toMicros } from '../money.ts';
import { systemClock, type Clock } from '../types.ts';
import {
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

  constructor(
    private readonly client: Redis,
    private readonly keys: KeySpace,
    private readonly clock: Clock = systemClock,
  ) {
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
      ],
    );
    if (!Array.isArray(raw)) throw new Error('wallet move script: unexpected reply');
    const status = int(raw[0], 'status');
    if (status === 0) return { ok: false, balanceUsd: fromMicros(int(raw[1], 'balance')) };
    const id = String(raw[1]);
    if (status === 2) return { ok: true, entry: parseLedgerEntry(id, raw[2]), duplicate: true };
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
      [arg(toMicros(configuredUsd)), arg(now)],
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
    // Sum the bulk in chunks without blocking Redis, then let one script add the tail and write.
    let sum = 0;
    let entries = 0;
    let last = '';
    for (;;) {
      const start = last === '' ? '-' : `(${last}`;
      const rows = await this.read('wallet.rebuildBalance', () =>
        this.client.xrange(this.keys.ledger(tenant), start, '+', 'COUNT', REBUILD_CHUNK),
      );
      for (const [id, fields] of rows) {
        sum += Number(fieldMap(fields).get('amount') ?? 0);
        last = id;
      }
      entries += rows.length;
      if (rows.length < REBUILD_CHUNK) break;
    }
    const raw = await this.rebuildScript(
      [this.keys.wallet(tenant), this.keys.ledger(tenant)],
      [last, arg(sum)],
    );
    if (!Array.isArray(raw) || raw.length !== 3) throw new Error('wallet rebuild script: unexpected reply');
    return {
      balanceUsd: fromMicros(int(raw[0], 'balance')),
      previousUsd: fromMicros(int(raw[1], 'previous')),
      entries: entries + int(raw[2], 'tail'),
    };
  }
}
