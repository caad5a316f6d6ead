/**
 * Record ids remembered for a while (so a retried record is not counted twice), oldest first
 * in a ring: an id and the time it may be forgotten take two array slots, not an object and
 * two boxed numbers each. Ids are remembered in time order, so the oldest is at the ring's
 * head and forgetting what is due, or the oldest past the bound, is O(1) per id.
 */
export class IdWindow {
  /** id → ring slot of its newest entry. */
  private readonly slots = new Map<string, number>();
  private ids: (string | undefined)[] = [];
  private until = new Float64Array(0);
  private head = 0;
  private count = 0;

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1)
      throw new Error(`id window must hold at least 1 id, got ${max}`);
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** Ids remembered now. */
  get size(): number {
    return this.slots.size;
  }

  /** Remember `id` until `until` (not before the last id's); past `max` ids the oldest is forgotten early. */
  remember(id: string, until: number): void {
    if (this.count === this.max) this.forgetOldest();
    // Grown by doubling up to `max`, so a quiet store stays small.
    if (this.count === this.until.length) this.grow();
    const slot = (this.head + this.count) % this.until.length;
    this.ids[slot] = id;
    this.until[slot] = until;
    this.count++;
    this.slots.set(id, slot);
  }

  /** Forgets every id due by `now`. */
  forgetDue(now: number): void {
    while (this.count > 0 && this.until[this.head]! <= now) this.forgetOldest();
  }

  private forgetOldest(): void {
    const id = this.ids[this.head]!;
    // Only the entry this slot stands for: an id remembered again later has a newer slot.
    if (this.slots.get(id) === this.head) this.slots.delete(id);
    this.ids[this.head] = undefined;
    this.head = (this.head + 1) % this.until.length;
    this.count--;
  }

  private grow(): void {
    const cap = Math.min(this.max, Math.max(64, this.until.length * 2));
    const ids: (string | undefined)[] = new Array<string | undefined>(cap).fill(undefined);
    const until = new Float64Array(cap);
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % this.until.length;
      const id = this.ids[from]!;
      ids[i] = id;
      until[i] = this.until[from]!;
      if (this.slots.get(id) === from) this.slots.set(id, i);
    }
    this.ids = ids;
    this.until = until;
    this.head = 0;
  }
}
