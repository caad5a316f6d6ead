/**
 * Every occurrence of a fixed set of ASCII keywords in one pass over a text (Aho-Corasick,
 * compiled to a transition table over the keywords' own characters).
 *
 * Why not one alternation regex: when the keywords begin with most letters of the alphabet,
 * V8 enters the alternation at nearly every position of the text; the automaton reads each
 * character once, with one table lookup, whatever the number of keywords.
 */
/** Occurrences a reused buffer keeps room for (256 KiB); a text with more gets its own. */
const KEPT_MATCHES = 32 * 1024;

function grown(found: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const next = new Float64Array(found.length * 2);
  next.set(found);
  return next;
}

export class KeywordAutomaton {
  /** Keyword lengths by id (ids follow the order of the constructor's list). */
  readonly lengths: Int32Array;
  /** The longest keyword's length. */
  readonly longest: number;
  /** Character class per ASCII code; 0 for characters no keyword has (and all non-ASCII). */
  private readonly classOf = new Uint8Array(128);
  private readonly classes: number;
  /** Row offset of the next state = delta[row offset of the state + class]. */
  private readonly delta: Uint16Array;
  /** Row offsets from here on are states where some keyword ends. */
  private readonly firstOut: number;
  /** Keyword ids ending in each state: outIds[outStart[s] .. outStart[s + 1]). */
  private readonly outStart: Int32Array;
  private readonly outIds: Int32Array;
  /** Characters matched so far in each state (its trie depth), by state number. */
  private readonly depth: Int32Array;
  /** Reused occurrence buffer; grown on demand, up to KEPT_MATCHES. */
  private found = new Float64Array(64);

  constructor(readonly keywords: readonly string[]) {
    if (keywords.length > 512) throw new Error('at most 512 keywords');
    this.lengths = Int32Array.from(keywords, (k) => k.length);
    this.longest = keywords.reduce((n, k) => Math.max(n, k.length), 0);
    let classes = 1;
    for (const k of keywords) {
      if (k === '' || k.length > 127) throw new Error(`keyword ${JSON.stringify(k)}: 1 to 127 characters`);
      for (let i = 0; i < k.length; i++) {
        const c = k.charCodeAt(i);
        if (c >= 128) throw new Error(`keyword ${JSON.stringify(k)}: ASCII only`);
        if (this.classOf[c] === 0) this.classOf[c] = classes++;
      }
    }
    this.classes = classes;
    // Trie first: goto[state][class], -1 for no edge.
    const go: Int32Array[] = [new Int32Array(classes).fill(-1)];
    const own: number[][] = [[]];
    const depth: number[] = [0];
    keywords.forEach((k, id) => {
      let s = 0;
      for (let i = 0; i < k.length; i++) {
        const cls = this.classOf[k.charCodeAt(i)] as number;
        let next = (go[s] as Int32Array)[cls] as number;
        if (next < 0) {
          next = go.length;
          go.push(new Int32Array(classes).fill(-1));
          own.push([]);
          depth.push(i + 1);
          (go[s] as Int32Array)[cls] = next;
        }
        s = next;
      }
      (own[s] as number[]).push(id);
    });
    // Breadth first: failure links, full transitions and inherited outputs.
    const states = go.length;
    const delta = new Int32Array(states * classes);
    const fail = new Int32Array(states);
    const outs: number[][] = own.map((o) => [...o]);
    const queue: number[] = [];
    for (let c = 0; c < classes; c++) {
      const next = (go[0] as Int32Array)[c] as number;
      delta[c] = next < 0 ? 0 : next;
      if (next > 0) queue.push(next);
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q] as number;
      const f = fail[s] as number;
      (outs[s] as number[]).push(...(outs[f] as number[]));
      for (let c = 0; c < classes; c++) {
        const next = (go[s] as Int32Array)[c] as number;
        if (next < 0) delta[s * classes + c] = delta[f * classes + c] as number;
        else {
          delta[s * classes + c] = next;
          fail[next] = delta[f * classes + c] as number;
          queue.push(next);
        }
      }
    }
    // Renumber so that states with outputs come last, and store each next state as its row
    // offset: the scan loop is then one lookup and one comparison per character.
    const order = [...Array(states).keys()].sort(
      (x, y) => Number((outs[x] as number[]).length > 0) - Number((outs[y] as number[]).length > 0) || x - y,
    );
    const rank = new Int32Array(states);
    order.forEach((old, i) => (rank[old] = i));
    if (states * classes > 0xffff) throw new Error('keyword automaton too large for 16-bit states');
    this.delta = new Uint16Array(states * classes);
    for (let old = 0; old < states; old++)
      for (let c = 0; c < classes; c++)
        this.delta[(rank[old] as number) * classes + c] =
          (rank[delta[old * classes + c] as number] as number) * classes;
    this.depth = new Int32Array(states);
    for (let old = 0; old < states; old++) this.depth[rank[old] as number] = depth[old] as number;
    this.firstOut = order.findIndex((old) => (outs[old] as number[]).length > 0);
    if (this.firstOut < 0) this.firstOut = states;
    this.firstOut *= classes;
    this.outStart = new Int32Array(states + 1);
    for (let i = 0; i < states; i++)
      this.outStart[i + 1] = (this.outStart[i] as number) + (outs[order[i] as number] as number[]).length;
    this.outIds = Int32Array.from(order.flatMap((old) => outs[old] as number[]));
  }

  /**
   * What a word (pad[1..n], lower-cased ASCII code points) can hold of the keywords: bit 1
   * when some keyword ends inside it, bit 2 when the word, followed by one of `then` (char
   * codes), is a suffix of the start of some keyword, so a keyword may begin inside the word
   * and run on past it.
   */
  wordNote(pad: Int32Array, n: number, then: readonly number[]): number {
    const { classOf, classes, delta, firstOut, depth } = this;
    let s = 0;
    let note = 0;
    for (let k = 1; k <= n; k++) {
      const c = pad[k] as number;
      s = delta[s + (c < 128 ? (classOf[c] as number) : 0)] as number;
      if (s >= firstOut) note = 1;
    }
    for (const c of then) {
      // Depth 2 or more: some suffix of the word, one character at least, and c start a keyword.
      const t = delta[s + (c < 128 ? (classOf[c] as number) : 0)] as number;
      if ((depth[t / classes] as number) >= 2) return note | 2;
    }
    return note;
  }

  /**
   * Occurrences in text[from, to) that start in [keepFrom, keepTo), appended to `out` as
   * packed numbers (see scan), unordered. The scan starts afresh at `from`, so it finds
   * every occurrence that starts there or later and ends by `to`.
   */
  scanRange(text: string, from: number, to: number, keepFrom: number, keepTo: number, out: number[]): void {
    const { classOf, classes, delta, firstOut, outStart, outIds, lengths } = this;
    let s = 0;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      s = delta[s + (c < 128 ? (classOf[c] as number) : 0)] as number;
      if (s < firstOut) continue;
      const state = s / classes;
      for (let k = outStart[state] as number, end = outStart[state + 1] as number; k < end; k++) {
        const id = outIds[k] as number;
        const len = lengths[id] as number;
        const start = i + 1 - len;
        if (start >= keepFrom && start < keepTo) out.push(start * 65536 + len * 512 + id);
      }
    }
  }

  /**
   * Occurrences in `text`, ordered by start, then by length (shortest first), as packed
   * numbers: decode each with `start = Math.floor(x / 65536)`, `id = x % 512`. The array
   * is reused by the next call.
   */
  scan(text: string): { found: Float64Array; count: number } {
    const { classOf, classes, delta, firstOut, outStart, outIds, lengths } = this;
    let found = this.found;
    let count = 0;
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      s = delta[s + (c < 128 ? (classOf[c] as number) : 0)] as number;
      if (s < firstOut) continue;
      const state = s / classes;
      for (let k = outStart[state] as number, to = outStart[state + 1] as number; k < to; k++) {
        const id = outIds[k] as number;
        const len = lengths[id] as number;
        if (count === found.length) {
          found = grown(found);
          // Kept for the next call only up to a cap: one huge text must not size it for good.
          if (found.length <= KEPT_MATCHES) this.found = found;
        }
        // Start, then length, then id in one sortable number (ids < 512, lengths < 128).
        found[count++] = (i + 1 - len) * 65536 + len * 512 + id;
      }
    }
    found.subarray(0, count).sort();
    return { found, count };
  }
}
