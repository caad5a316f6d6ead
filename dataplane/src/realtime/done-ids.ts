/**
 * Ids of responses already settled in a session, so a second `response.done` for one of them
 * (a duplicate, a replay) settles nothing. Before, such a `response.done` took the oldest queued
 * hold, which belonged to another response, and that response was then held and charged again.
 * Bounded: a session is long, and only recent ids can plausibly be repeated.
 */
export class DoneIds {
  private readonly ids = new Set<string>();

  constructor(private readonly max = 1_024) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    // A Set iterates in insertion order: the first is the oldest.
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
  }
}
