/**
 * In-process response store: bounded by entry count (oldest evicted first) and by age, so a
 * busy gateway holds at most `maxEntries` conversations and none longer than `ttlMs`.
 * Responses live in one pod only: with several replicas use the Redis store.
 */
import { systemClock, type Clock } from '../types.ts';
import { ownedKey, type ResponseOwner, type ResponseStore, type StoredResponse } from './types.ts';

export interface MemoryResponseStoreOptions {
  maxEntries?: number;
  ttlMs?: number;
  clock?: Clock;
}

export const DEFAULT_MAX_RESPONSES = 10_000;
/** OpenAI keeps stored responses for 30 days; an in-process store keeps them a day. */
export const DEFAULT_RESPONSE_TTL_MS = 24 * 60 * 60 * 1000;

export class MemoryResponseStore implements ResponseStore {
  private readonly entries = new Map<string, { entry: StoredResponse; expiresAt: number }>();
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly clock: Clock;

  constructor(opts: MemoryResponseStoreOptions = {}) {
    this.maxEntries = opts.maxEntries ?? DEFAULT_MAX_RESPONSES;
    this.ttlMs = opts.ttlMs ?? DEFAULT_RESPONSE_TTL_MS;
    this.clock = opts.clock ?? systemClock;
  }

  async put(owner: ResponseOwner, entry: StoredResponse): Promise<void> {
    const key = ownedKey(owner, entry.response.id);
    this.entries.delete(key);
    // structuredClone: later edits by the caller never reach the stored copy.
    this.entries.set(key, { entry: structuredClone(entry), expiresAt: this.clock() + this.ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  async get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined> {
    const key = ownedKey(owner, id);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return structuredClone(hit.entry);
  }

  async delete(owner: ResponseOwner, id: string): Promise<boolean> {
    const key = ownedKey(owner, id);
    const hit = this.entries.get(key);
    this.entries.delete(key);
    return hit !== undefined && hit.expiresAt > this.clock();
  }
}
