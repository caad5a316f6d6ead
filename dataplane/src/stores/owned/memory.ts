/**
 * In-process owned objects, kept as JSON (the copy, and the size): bounded by count, by
 * total characters (oldest evicted first) and by age. Objects live in one pod only.
 */
import { systemClock, type Clock } from '../types.ts';
import { ownedKey, type Owner, type OwnedStore } from './types.ts';

export interface MemoryOwnedStoreOptions {
  maxEntries?: number;
  maxChars?: number;
  ttlMs?: number;
  clock?: Clock;
}

export class MemoryOwnedStore<T> implements OwnedStore<T> {
  private readonly entries = new Map<string, { json: string; expiresAt: number }>();
  private chars = 0;
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private readonly ttlMs: number;
  private readonly clock: Clock;

  constructor(opts: MemoryOwnedStoreOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.maxChars = opts.maxChars ?? 64 * 1024 * 1024;
    this.ttlMs = opts.ttlMs ?? 24 * 60 * 60 * 1000;
    this.clock = opts.clock ?? systemClock;
  }

  async put(owner: Owner, id: string, value: T): Promise<void> {
    const key = ownedKey(owner, id);
    this.remove(key);
    const json = JSON.stringify(value);
    this.entries.set(key, { json, expiresAt: this.clock() + this.ttlMs });
    this.chars += json.length;
    while (this.entries.size > this.maxEntries || this.chars > this.maxChars) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.remove(oldest.value);
    }
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
    this.chars -= hit.json.length;
    this.entries.delete(key);
  }
}
