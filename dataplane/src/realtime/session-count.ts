/**
 * Open Realtime sessions per API key on this pod. A session is a long-lived socket the rate
 * limit counts once, at connect; this cap stops one key from holding the pod's connections.
 */
export class SessionCount {
  private readonly open = new Map<string, number>();

  /** Takes a slot for `key`, or tells that it already holds `max`. Pair a true with one release(). */
  take(key: string, max: number): boolean {
    const n = this.open.get(key) ?? 0;
    if (n >= max) return false;
    this.open.set(key, n + 1);
    return true;
  }

  release(key: string): void {
    const n = (this.open.get(key) ?? 0) - 1;
    if (n <= 0) this.open.delete(key);
    else this.open.set(key, n);
  }

  of(key: string): number {
    return this.open.get(key) ?? 0;
  }
}
