/**
 * CCR in process, for a standalone gateway. A Map's insertion order is its LRU order: a
 * scope used again is moved to the end, the first one is the least recently used.
 *
 * Besides SPEC.md's count bounds, what is held is bounded in characters (content, labels and
 * keywords; recall.ts makes sure those are all the memory an entry keeps): an entry is a
 * verbatim tool output or file as long as a request body allows, so 512 scopes × 32 entries
 * alone could hold gigabytes. Past the bound the least recently used scopes go first, then
 * the scope being filed loses its own oldest entries. (Redis bounds each scope: redis.ts.)
 */
import { systemClock, type Clock } from '../../../stores/types.ts';
import { CCR_ENTRY_LIFETIME_MS, CCR_FILES_PER_SCOPE, CCR_LIVE_SCOPES } from './limits.ts';
import { entryChars } from './size.ts';
import type { CcrEntry, CcrStore, CcrTurn } from './types.ts';

/** As much as the in-process response store keeps. */
export const DEFAULT_CCR_MAX_CHARS = 128 * 1024 * 1024;

interface ScopeState {
  turn: number;
  usedAt: number;
  /** Insertion order = filing order, oldest first. */
  entries: Map<string, CcrEntry>;
  /** Characters held by `entries` (content, labels, keywords). */
  chars: number;
}

export interface MemoryCcrOptions {
  clock?: Clock;
  maxScopes?: number;
  /** Characters (content, labels, keywords) held in all scopes together. */
  maxChars?: number;
}

export class MemoryCcrStore implements CcrStore {
  readonly backend = 'memory';
  private readonly scopes = new Map<string, ScopeState>();
  private readonly clock: Clock;
  private readonly maxScopes: number;
  private readonly maxChars: number;
  private total = 0;

  constructor(opts: MemoryCcrOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.maxScopes = opts.maxScopes ?? CCR_LIVE_SCOPES;
    this.maxChars = opts.maxChars ?? DEFAULT_CCR_MAX_CHARS;
  }

  /** The scope, made most recently used; created when absent or idle past the lifetime. */
  private touch(partition: string): ScopeState {
    const now = this.clock();
    let s = this.scopes.get(partition);
    if (s) this.dropScope(partition);
    if (!s || now - s.usedAt >= CCR_ENTRY_LIFETIME_MS)
      s = { turn: 0, usedAt: now, entries: new Map(), chars: 0 };
    s.usedAt = now;
    this.scopes.set(partition, s);
    this.total += s.chars;
    while (this.scopes.size > this.maxScopes) {
      const lru = this.scopes.keys().next();
      if (lru.done) break;
      this.dropScope(lru.value);
    }
    for (const [id, e] of s.entries) if (now - e.storedAt >= CCR_ENTRY_LIFETIME_MS) this.dropEntry(s, id);
    return s;
  }

  private dropScope(partition: string): void {
    const s = this.scopes.get(partition);
    if (!s) return;
    this.total -= s.chars;
    this.scopes.delete(partition);
  }

  private dropEntry(s: ScopeState, id: string): void {
    const e = s.entries.get(id);
    if (!e) return;
    const n = entryChars(e);
    s.chars -= n;
    this.total -= n;
    s.entries.delete(id);
  }

  async openTurn(partition: string): Promise<CcrTurn> {
    const s = this.touch(partition);
    s.turn++;
    return {
      turn: s.turn,
      entries: [...s.entries.values()].map(({ content: _c, ...index }) => ({
        ...index,
        keywords: [...index.keywords],
      })),
    };
  }

  async file(partition: string, entries: readonly Omit<CcrEntry, 'mentionedTurn'>[]): Promise<void> {
    if (entries.length === 0) return;
    const s = this.touch(partition);
    for (const e of entries) {
      const n = entryChars(e);
      // Kept, it would push every other scope out and still not fit.
      if (n > this.maxChars) continue;
      const old = s.entries.get(e.id);
      this.dropEntry(s, e.id);
      s.entries.set(e.id, { ...e, keywords: [...e.keywords], mentionedTurn: old?.mentionedTurn });
      s.chars += n;
      this.total += n;
    }
    while (s.entries.size > CCR_FILES_PER_SCOPE) this.dropOldest(s);
    // Other scopes, least recently used first (this one is the most recent), then its own oldest.
    for (const lru of this.scopes.keys()) {
      if (this.total <= this.maxChars || lru === partition) break;
      this.dropScope(lru);
    }
    while (this.total > this.maxChars && s.entries.size > 0) this.dropOldest(s);
  }

  private dropOldest(s: ScopeState): void {
    const oldest = s.entries.keys().next();
    if (!oldest.done) this.dropEntry(s, oldest.value);
  }

  async recall(
    partition: string,
    ids: readonly string[],
    mentioned: readonly string[],
    turn: number,
  ): Promise<CcrEntry[]> {
    if (ids.length === 0 && mentioned.length === 0) return [];
    const s = this.touch(partition);
    for (const id of mentioned) {
      const e = s.entries.get(id);
      if (e) e.mentionedTurn = turn;
    }
    const out: CcrEntry[] = [];
    for (const id of ids) {
      const e = s.entries.get(id);
      if (e) out.push({ ...e, keywords: [...e.keywords] });
    }
    return out;
  }

  /** Live scopes (for tests of the LRU bound). */
  get size(): number {
    return this.scopes.size;
  }

  /** Characters held (for tests of the size bound). */
  get chars(): number {
    return this.total;
  }

  async close(): Promise<void> {
    this.scopes.clear();
    this.total = 0;
  }
}
