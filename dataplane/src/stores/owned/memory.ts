/**
 * In-process owned objects, kept as JSON (the copy, and the size): bounded by count and by
 * total characters, fairly between tenants (TenantBound: past a tenant's own cap its oldest
 * write goes; past the store's, the largest tenant's oldest), and by age. One tenant's flood
 * of interactions or A2A tasks evicts its own oldest objects, never those of a tenant
 * holding less. Objects live in one pod only.
 */
import { recordedBytes, SIZE_HEAD_CHARS, type OversizedRecord } from '../size-head.ts';
import { TenantBound } from '../tenant-bound.ts';
import { systemClock, type Clock } from '../types.ts';
import { ownedKey, type Owner, type OwnedStore } from './types.ts';

export interface MemoryOwnedStoreOptions {
  maxEntries?: number;
  maxChars?: number;
  /** One tenant's share at most (defaults: the store's bounds; largest-first eviction still applies). */
  maxEntriesPerTenant?: number;
  maxCharsPerTenant?: number;
  ttlMs?: number;
  clock?: Clock;
}

interface Stored {
  json: string;
  expiresAt: number;
  tenant: string;
}

export class MemoryOwnedStore<T> implements OwnedStore<T> {
  private readonly entries = new Map<string, Stored>();
  private readonly bound: TenantBound;
  private readonly ttlMs: number;
  private readonly clock: Clock;

  constructor(opts: MemoryOwnedStoreOptions = {}) {
    this.bound = new TenantBound({
      maxEntries: opts.maxEntries ?? 10_000,
      maxBytes: opts.maxChars ?? 64 * 1024 * 1024,
      maxEntriesPerTenant: opts.maxEntriesPerTenant,
      maxBytesPerTenant: opts.maxCharsPerTenant,
    });
    this.ttlMs = opts.ttlMs ?? 24 * 60 * 60 * 1000;
    this.clock = opts.clock ?? systemClock;
  }

  async put(owner: Owner, id: string, value: T): Promise<void> {
    this.write(owner, id, value);
  }

  async putJson(owner: Owner, id: string, json: string): Promise<void> {
    this.writeJson(owner, id, json);
  }

  async getWithin(
    owner: Owner,
    id: string,
    maxConversationBytes: number,
  ): Promise<T | OversizedRecord | undefined> {
    const head = await this.head(owner, id, SIZE_HEAD_CHARS);
    if (head === undefined) return undefined;
    const bytes = recordedBytes(head);
    if (bytes !== undefined && bytes > maxConversationBytes)
      return { oversized: true, conversationBytes: bytes };
    return this.get(owner, id);
  }

  /** The first `chars` characters of a live object's JSON, without parsing the rest. */
  async head(owner: Owner, id: string, chars: number): Promise<string | undefined> {
    const hit = this.entries.get(ownedKey(owner, id));
    return hit && hit.expiresAt > this.clock() ? hit.json.slice(0, chars) : undefined;
  }

  /** Characters `start` to `end` (exclusive) of a live object's JSON. */
  async slice(owner: Owner, id: string, start: number, end: number): Promise<string | undefined> {
    const hit = this.entries.get(ownedKey(owner, id));
    return hit && hit.expiresAt > this.clock() ? hit.json.slice(start, end) : undefined;
  }

  private write(owner: Owner, id: string, value: T): void {
    this.writeJson(owner, id, JSON.stringify(value));
  }

  private writeJson(owner: Owner, id: string, json: string): void {
    const key = ownedKey(owner, id);
    this.remove(key);
    this.entries.set(key, { json, expiresAt: this.clock() + this.ttlMs, tenant: owner.tenant });
    for (const victim of this.bound.added(owner.tenant, key, json.length)) this.entries.delete(victim.key);
  }

  /** No await between the look and the write: nothing can slip in between. */
  async putIfAbsent(owner: Owner, id: string, value: T): Promise<boolean> {
    const hit = this.entries.get(ownedKey(owner, id));
    if (hit && hit.expiresAt > this.clock()) return false;
    this.write(owner, id, value);
    return true;
  }

  async get(owner: Owner, id: string): Promise<T | undefined> {
    const key = ownedKey(owner, id);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.clock()) {
      this.remove(key);
      return undefined;
    }
    return JSON.parse(hit.json) as T;
  }

  async delete(owner: Owner, id: string): Promise<boolean> {
    const key = ownedKey(owner, id);
    const hit = this.entries.get(key);
    this.remove(key);
    return hit !== undefined && hit.expiresAt > this.clock();
  }

  private remove(key: string): void {
    const hit = this.entries.get(key);
    if (!hit) return;
    this.entries.delete(key);
    this.bound.removed(hit.tenant, key);
  }
}
