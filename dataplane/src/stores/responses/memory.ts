/**
 * In-process response store: bounded by entry count and by total size (oldest evicted first)
 * and by age, so a busy gateway holds at most `maxEntries` conversations, `maxChars` of them
 * in all, and none longer than `ttlMs`. The size bound matters: each entry carries its whole
 * conversation, so a long `previous_response_id` chain grows quadratically.
 * Responses live in one pod only: with several replicas use the Redis store.
 */
import { systemClock, type Clock } from '../types.ts';
import { ownedKey, type ResponseOwner, type ResponseStore, type StoredResponse } from './types.ts';

export interface MemoryResponseStoreOptions {
  maxEntries?: number;
  /** Total characters of the stored JSON. */
  maxChars?: number;
  ttlMs?: number;
  clock?: Clock;
}

export const DEFAULT_MAX_RESPONSES = 10_000;
export const DEFAULT_MAX_RESPONSE_CHARS = 128 * 1024 * 1024;
/** OpenAI keeps stored responses for 30 days; an in-process store keeps them a day. */
export const DEFAULT_RESPONSE_TTL_MS = 24 * 60 * 60 * 1000;

export class MemoryResponseStore implements ResponseStore {
  /** Stored as JSON: it is both the copy (later edits by a caller never reach it) and the size. */
  private readonly entries = new Map<string, { json: string; expiresAt: number }>();
  private chars = 0;
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private readonly ttlMs: number;
  private readonly clock: Clock;

  constructor(opts: MemoryResponseStoreOptions = {}) {
    this.maxEntries = opts.maxEntries ?? DEFAULT_MAX_RESPONSES;
    this.maxChars = opts.maxChars ?? DEFAULT_MAX_RESPONSE_CHARS;
    this.ttlMs = opts.ttlMs ?? DEFAULT_RESPONSE_TTL_MS;
    this.clock = opts.clock ?? systemClock;
  }

  async put(owner: ResponseOwner, entry: StoredResponse): Promise<void> {
    const key = ownedKey(owner, entry.response.id);
    this.remove(key);
    const json = JSON.stringify(entry);
    this.entries.set(key, { json, expiresAt: this.clock() + this.ttlMs });
    this.chars += json.length;
    while (this.entries.size > this.maxEntries || this.chars > this.maxChars) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.remove(oldest.value);
    }
  }

  private remove(key: string): void {
    const hit = this.entries.get(key);
    if (!hit) return;
    this.chars -= hit.json.length;
    this.entries.delete(key);
  }

  async get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined> {
    const key = ownedKey(owner, id);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.clock()) {
      this.remove(key);
      return undefined;
    }
    return JSON.parse(hit.json) as StoredResponse;
  }

  async delete(owner: ResponseOwner, id: string): Promise<boolean> {
    const key = ownedKey(owner, id);
    const hit = this.entries.get(key);
    this.remove(key);
    return hit !== undefined && hit.expiresAt > this.clock();
  }
}
