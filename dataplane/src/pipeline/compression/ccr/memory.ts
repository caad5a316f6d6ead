/**
 * CCR in process, for a standalone gateway. A Map's insertion order is its LRU order: a
 * scope used again is moved to the end, the first one is the least recently used.
 */
import { systemClock, type Clock } from '../../../stores/types.ts';
import { CCR_ENTRY_LIFETIME_MS, CCR_FILES_PER_SCOPE, CCR_LIVE_SCOPES } from './limits.ts';
import type { CcrEntry, CcrStore, CcrTurn } from './types.ts';

interface ScopeState {
  turn: number;
  usedAt: number;
  /** Insertion order = filing order, oldest first. */
  entries: Map<string, CcrEntry>;
}

export interface MemoryCcrOptions {
  clock?: Clock;
  maxScopes?: number;
}

export class MemoryCcrStore implements CcrStore {
  readonly backend = 'memory';
  private readonly scopes = new Map<string, ScopeState>();
  private readonly clock: Clock;
  private readonly maxScopes: number;

  constructor(opts: MemoryCcrOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.maxScopes = opts.maxScopes ?? CCR_LIVE_SCOPES;
  }

  /** The scope, made most recently used; created when absent or idle past the lifetime. */
  private touch(partition: string): ScopeState {
    const now = this.clock();
    let s = this.scopes.get(partition);
    if (s) this.scopes.delete(partition);
    if (!s || now - s.usedAt >= CCR_ENTRY_LIFETIME_MS) s = { turn: 0, usedAt: now, entries: new Map() };
    s.usedAt = now;
    this.scopes.set(partition, s);
    while (this.scopes.size > this.maxScopes) {
      const lru = this.scopes.keys().next();
      if (lru.done) break;
      this.scopes.delete(lru.value);
    }
    for (const [id, e] of s.entries) if (now - e.storedAt >= CCR_ENTRY_LIFETIME_MS) s.entries.delete(id);
    return s;
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
      const old = s.entries.get(e.id);
      s.entries.delete(e.id);
      s.entries.set(e.id, { ...e, keywords: [...e.keywords], mentionedTurn: old?.mentionedTurn });
    }
    while (s.entries.size > CCR_FILES_PER_SCOPE) {
      const oldest = s.entries.keys().next();
      if (oldest.done) break;
      s.entries.delete(oldest.value);
    }
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

  async close(): Promise<void> {
    this.scopes.clear();
  }
}
