/**
 * The context-recovery store: verbatim content compression removed, filed per scope
 * partition. In process (standalone) or in Redis (a cluster); both keep SPEC.md's limits:
 * 32 entries per scope (oldest evicted), 512 live scopes (least recently used evicted),
 * 30-minute lifetime, and a per-scope turn counter for the working-set decay.
 */

export interface CcrEntry {
  /** SHA-256 of the content: the same content filed twice is one entry. */
  id: string;
  /** What it was (`read_file {"path":"src/a.ts"}`), shown when it is re-injected. */
  label: string;
  /** Words the conversation must use again for it to come back. */
  keywords: string[];
  content: string;
  /** When it was last filed (epoch ms): the lifetime runs from here. */
  storedAt: number;
  /** The scope turn it was last mentioned in; undefined when never. */
  mentionedTurn: number | undefined;
}

export type CcrIndexEntry = Omit<CcrEntry, 'content'>;

export interface CcrTurn {
  /** This request's turn number in the scope (1 for the first). */
  turn: number;
  /** Live entries, without their content. */
  entries: CcrIndexEntry[];
}

export interface CcrStore {
  readonly backend: 'memory' | 'redis';
  /** Starts a turn: counts it, makes the scope most recently used, drops expired entries. */
  openTurn(partition: string): Promise<CcrTurn>;
  /** Files entries (an id already there is refreshed, keeping its mention); evicts the oldest past 32. */
  file(partition: string, entries: readonly Omit<CcrEntry, 'mentionedTurn'>[]): Promise<void>;
  /**
   * The live entries among `ids`, content included, in the order asked; those in
   * `mentioned` are recorded as mentioned in `turn` (the working set's decay restarts).
   */
  recall(
    partition: string,
    ids: readonly string[],
    mentioned: readonly string[],
    turn: number,
  ): Promise<CcrEntry[]>;
  close(): Promise<void>;
}
