/**
 * Ids remembered for a fixed time, forgotten oldest first. Every id is kept for the same span,
 * so insertion order is expiry order and a sweep stops at the first live id: its cost is what
 * expired, not what is remembered (a tenant's day of cache credits was walked on every credit).
 */
export class ExpiringIds<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  /** Ids looked at by sweeps, for tests that check a sweep's cost without timing it. */
  visited = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Forgets the ids whose time ran out, from the oldest up to the first still live. */
  sweep(now: number): void {
    for (const [id, e] of this.entries) {
      this.visited++;
      if (e.until > now) break;
      this.entries.delete(id);
    }
  }

  /** The value of a live id. One left behind a live one (the clock stepped back) reads as gone. */
  get(id: string, now: number): V | undefined {
    const e = this.entries.get(id);
    return e !== undefined && e.until > now ? e.value : undefined;
  }

  /** Remembers `id` until `until`; a reused id moves to the back, keeping the order. */
  set(id: string, value: V, until: number): void {
    this.entries.delete(id);
    this.entries.set(id, { value, until });
  }
}
