/**
 * What one operator remembers between plans. Every resync reconciles an unchanged world, and
 * over the limit the selection costs a search of full gzips (about 9 s of CPU for 28,000 keys,
 * blocking the event loop and the Lease renewal). It belongs to one controller: two operators
 * in one process (the tests run two) each keep their own. A remembered result is the one
 * recomputing would give, so plan stays a function of the world.
 */
import type { Entry } from './publication.ts';

/** How often each remembered step was computed rather than remembered (tests, logs). */
export interface PlanWork {
  /** Over-the-limit selections (withinLimit). */
  selections: number;
}

export class PlanMemo {
  private selection: { inputs: string; entries: Entry[] } | undefined;
  private readonly counts: PlanWork = { selections: 0 };

  /** The selection for these inputs (a hash of everything it reads), computed on a change only. */
  select(inputs: string, compute: () => Entry[]): Entry[] {
    if (this.selection?.inputs !== inputs) {
      this.selection = { inputs, entries: compute() };
      this.counts.selections++;
    }
    return this.selection.entries;
  }

  work(): Readonly<PlanWork> {
    return { ...this.counts };
  }
}
