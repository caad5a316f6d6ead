/**
 * What one operator remembers between plans. Every resync reconciles an unchanged world; over
 * the limit, measuring the snapshot is a gzip of all of it, reading the published one a gunzip
 * and parse of all of it, and the selection a search of full gzips (about 9 s of CPU for 28,000
 * keys, blocking the event loop and the Lease renewal). It belongs to one controller: two
 * operators in one process (the tests run two) each keep their own. A remembered result is the
 * one recomputing would give, so plan stays a function of the world.
 */
import type { Published } from '../world.ts';
import type { Fitted } from './publication.ts';

/** How often each remembered step was computed rather than remembered (tests, logs). */
export interface PlanWork {
  /** Sizes of the whole desired publication (a gzip once its plain text nears the limit). */
  measures: number;
  /** Reads of the published snapshot (a gunzip and a parse). */
  publishedReads: number;
  /** Over-the-limit selections (a search of full gzips). */
  selections: number;
}

/** The last value computed and the key it was computed for. */
class Slot<T> {
  private last: { key: string; value: T } | undefined;
  computed = 0;

  get(key: string, compute: () => T): T {
    if (this.last?.key !== key) {
      this.last = { key, value: compute() };
      this.computed++;
    }
    return this.last.value;
  }
}

export class PlanMemo {
  private readonly sizes = new Slot<number>();
  private readonly reads = new Slot<Published | undefined>();
  private readonly selections = new Slot<Fitted>();

  /** The size of a publication, by its content hash. */
  measure(contentHash: string, compute: () => number): number {
    return this.sizes.get(contentHash, compute);
  }

  /** The published snapshot, by the resourceVersion of the Secret that holds it. */
  published(resourceVersion: string, read: () => Published | undefined): Published | undefined {
    return this.reads.get(resourceVersion, read);
  }

  /** The over-the-limit selection, by a hash of everything it reads. */
  select(inputs: string, compute: () => Fitted): Fitted {
    return this.selections.get(inputs, compute);
  }

  work(): Readonly<PlanWork> {
    return {
      measures: this.sizes.computed,
      publishedReads: this.reads.computed,
      selections: this.selections.computed,
    };
  }
}
