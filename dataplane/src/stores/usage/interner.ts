/**
 * Values kept once however many records name them, each under a small number, and let go when
 * the last record naming them is: the packed request log stores a record's strings (key,
 * model, deployment, ...) as one such number, so 10,000 records of the same few dimensions
 * hold a few tuples instead of 10,000 copies, and a dimension seen once does not stay forever.
 */
export class RefCountedInterner<T> {
  private readonly slots = new Map<string, number>();
  private readonly values: (T | undefined)[] = [];
  private readonly keys: string[] = [];
  private readonly refs: number[] = [];
  private readonly free: number[] = [];

  /** The number standing for `key`, one more reference to it; `make` runs for a new key only. */
  acquire(key: string, make: () => T): number {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.values.length;
      this.slots.set(key, slot);
      this.values[slot] = make();
      this.keys[slot] = key;
      this.refs[slot] = 0;
    }
    this.refs[slot]!++;
    return slot;
  }

  /** One more reference to a slot in use (the caller already holds one). */
  retain(slot: number): void {
    if (this.values[slot] === undefined) throw new Error(`interned slot ${slot} is not in use`);
    this.refs[slot]!++;
  }

  /** Whether `slot` stands for a value now. */
  holds(slot: number): boolean {
    return this.values[slot] !== undefined;
  }

  get(slot: number): T {
    const v = this.values[slot];
    if (v === undefined) throw new Error(`interned slot ${slot} is not in use`);
    return v;
  }

  /** One reference fewer; the value goes with its last one. */
  release(slot: number): void {
    const left = (this.refs[slot] ?? 0) - 1;
    if (left > 0) {
      this.refs[slot] = left;
      return;
    }
    this.slots.delete(this.keys[slot]!);
    this.values[slot] = undefined;
    this.keys[slot] = '';
    this.refs[slot] = 0;
    this.free.push(slot);
  }

  /** Distinct values held. */
  get size(): number {
    return this.slots.size;
  }
}
