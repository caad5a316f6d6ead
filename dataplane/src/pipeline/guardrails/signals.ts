/**
 * The matching engine shared by the prompt-injection and toxicity detectors. A signal is a
 * regex with a weight and the lower-case word prefixes ("anchors") any of its matches must
 * contain. One trie-shaped regex over the lower-cased text finds every anchor; a signal
 * runs only in windows around its own anchors, or, when every match of it begins with an
 * anchor ("leading" signals: a verb, a listed word), once at each anchor, sticky. Signals
 * without anchors (weak cues, boosters) run only around hits of anchored ones. This keeps a
 * long, benign conversation at one regex pass instead of one per pattern, and a common
 * anchor word ("skip", "policy") at one regex attempt per leading signal.
 */

import { allAscii } from './spans.ts';

export interface Signal<C extends string = string> {
  category: C;
  weight: number;
  re: RegExp;
  anchors: string[];
  /** Every match begins where one of the anchors begins: try it there only. */
  leads?: boolean;
}

export interface Hit<C extends string = string> {
  category: C;
  weight: number;
  /** Which signal produced the hit; evidence counts once per signal, not once per weight. */
  source: string;
  start: number;
  end: number;
}

export function signal<C extends string>(
  category: C,
  weight: number,
  anchors: string,
  source: string,
  flags = 'gi',
): Signal<C> {
  return {
    category,
    weight,
    re: new RegExp(source, flags),
    anchors: anchors === '' ? [] : anchors.split(','),
  };
}

/** Marks a signal whose matches all begin with one of its anchors. */
export function leading<C extends string>(s: Signal<C>): Signal<C> {
  return { ...s, leads: true };
}

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A trie-shaped alternation: V8 checks one first character per position instead of every token. */
export function trie(tokens: string[]): string {
  interface Node {
    end: boolean;
    next: Map<string, Node>;
  }
  const root: Node = { end: false, next: new Map() };
  for (const t of tokens) {
    let n = root;
    for (const ch of t) {
      let child = n.next.get(ch);
      if (!child) {
        child = { end: false, next: new Map() };
        n.next.set(ch, child);
      }
      n = child;
    }
    n.end = true;
  }
  const build = (n: Node): string => {
    const alts = [...n.next].map(([ch, child]) => escapeRegex(ch) + build(child));
    if (alts.length === 0) return '';
    const body = alts.length === 1 ? (alts[0] ?? '') : `(?:${alts.join('|')})`;
    return n.end ? `(?:${body})?` : body;
  };
  return build(root);
}

const isAscii = (t: string): boolean => /^[\x20-\x7e]+$/.test(t);
const NON_LATIN =
  /[\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u0600-\u06ff\u0900-\u097f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]/;

/** Where one set's word anchors occur in a lower-cased text: offsets, and the longest anchor at each. */
export interface WordAnchors {
  at: number[];
  token: string[];
}

/** A text's lower-cased form and its word anchors, found once for several sets (AnchorUnion). */
export interface FoundAnchors {
  lower: string;
  words: WordAnchors;
}

type Windows<C extends string> = Map<Signal<C>, Array<[number, number]>>;
type Starts<C extends string> = Map<Signal<C>, number[]>;

export class SignalSet<C extends string> {
  private readonly anchored: Signal<C>[];
  private readonly unanchored: Signal<C>[];
  private readonly asciiAnchors: RegExp;
  private readonly markAnchors: RegExp | undefined;
  private readonly otherAnchors: RegExp | undefined;
  private readonly byToken = new Map<string, Signal<C>[]>();
  /** Anchors that begin with a word character: the ones `\b` gates (see AnchorUnion). */
  readonly wordTokens: ReadonlySet<string>;
  /** Sticky copies of leading signals, tried at an anchor's offset. */
  private readonly sticky = new Map<Signal<C>, RegExp>();

  constructor(
    signals: Signal<C>[],
    private readonly anchorWindow = 250,
    private readonly cueWindow = 300,
  ) {
    this.anchored = signals.filter((s) => s.anchors.length > 0);
    this.unanchored = signals.filter((s) => s.anchors.length === 0);
    const tokens = [...new Set(this.anchored.flatMap((s) => s.anchors))];
    const word = tokens.filter((t) => isAscii(t) && /^\w/.test(t));
    const mark = tokens.filter((t) => isAscii(t) && !/^\w/.test(t));
    const other = tokens.filter((t) => !isAscii(t));
    // No `i` flag: the text is lower-cased once, and case-insensitive alternations are slower.
    // Words and marks ("<|", "[inst]") in two passes: one alternation of a \b-gated trie and
    // ungated marks costs V8 more than both passes together.
    this.wordTokens = new Set(word);
    this.asciiAnchors = new RegExp(`\\b${trie(word)}`, 'g');
    this.markAnchors = mark.length > 0 ? new RegExp(trie(mark), 'g') : undefined;
    this.otherAnchors = other.length > 0 ? new RegExp(trie(other), 'g') : undefined;
    for (const s of this.anchored)
      if (s.leads) this.sticky.set(s, new RegExp(s.re.source, s.re.flags.replace('g', '') + 'y'));
  }

  private signalsFor(token: string): Signal<C>[] {
    let found = this.byToken.get(token);
    if (!found) {
      found = this.anchored.filter((s) => s.anchors.some((a) => token.startsWith(a) || a.startsWith(token)));
      this.byToken.set(token, found);
    }
    return found;
  }

  private collect(text: string, lower: string, re: RegExp, windows: Windows<C>, starts: Starts<C>): void {
    re.lastIndex = 0;
    for (let m = re.exec(lower); m !== null; m = re.exec(lower)) {
      this.anchorAt(text, m.index, m[0], windows, starts);
      // Step one character, not past the match: "system prompt" must not hide "prompt".
      re.lastIndex = m.index + 1;
    }
  }

  /** Opens the windows (or sticky starts) of the signals an anchor at `index` serves. */
  private anchorAt(text: string, index: number, token: string, windows: Windows<C>, starts: Starts<C>): void {
    const from = Math.max(0, index - this.anchorWindow);
    const to = Math.min(text.length, index + token.length + this.anchorWindow);
    for (const s of this.signalsFor(token)) {
      if (!s.leads) {
        addWindow(windows, s, from, to);
        continue;
      }
      const list = starts.get(s);
      if (!list) starts.set(s, [index]);
      else if (list[list.length - 1] !== index) list.push(index);
    }
  }

  /**
   * Every hit in `text`, in no particular order. `found`: its lower-cased form and word
   * anchors from an AnchorUnion pass over it, the same ones this set's own pass would find.
   */
  evidence(text: string, found?: FoundAnchors): Hit<C>[] {
    const lower = found?.lower ?? text.toLowerCase();
    const windows: Windows<C> = new Map();
    const starts: Starts<C> = new Map();
    if (lower.length === text.length) {
      if (found) {
        const { at, token } = found.words;
        for (let k = 0; k < at.length; k++)
          this.anchorAt(text, at[k] as number, token[k] as string, windows, starts);
      } else this.collect(text, lower, this.asciiAnchors, windows, starts);
      if (this.markAnchors) this.collect(text, lower, this.markAnchors, windows, starts);
      if (this.otherAnchors && !allAscii(text) && NON_LATIN.test(text))
        this.collect(text, lower, this.otherAnchors, windows, starts);
    } else {
      // Lower-casing changed the length (e.g. U+0130), so offsets would drift: run everything.
      for (const s of this.anchored) addWindow(windows, s, 0, text.length);
    }
    const hits: Hit<C>[] = [];
    for (const [s, list] of windows) for (const [from, to] of list) run(s, text, from, to, hits);
    for (const [s, list] of starts) {
      const re = this.sticky.get(s);
      if (!re) continue;
      for (const at of list) {
        re.lastIndex = at;
        const m = re.exec(text);
        if (m && m[0] !== '')
          hits.push({
            category: s.category,
            weight: s.weight,
            source: s.re.source,
            start: at,
            end: at + m[0].length,
          });
      }
    }
    if (hits.length === 0 || this.unanchored.length === 0) return hits;
    const around: Array<[number, number]> = [];
    for (const h of [...hits].sort((a, b) => a.start - b.start)) {
      const from = Math.max(0, h.start - this.cueWindow);
      const to = Math.min(text.length, h.end + this.cueWindow);
      const last = around[around.length - 1];
      if (last && from <= last[1]) last[1] = Math.max(last[1], to);
      else around.push([from, to]);
    }
    for (const s of this.unanchored) for (const [from, to] of around) run(s, text, from, to, hits);
    return dedupeHits(hits);
  }
}

/**
 * One pass of `\b` + a trie of every set's word anchors, for texts that several sets
 * read (prompt injection and toxicity): each set gets, at each offset, the longest of its
 * own anchors that starts there, exactly what its own pass would have found. The longest
 * anchor of any set at an offset starts with every shorter one that matches there, so a
 * set's own longest is the longest of its anchors that the union's match starts with.
 */
export class AnchorUnion {
  private readonly re: RegExp;
  /** The union's anchors; `own[k]` holds, per set, the longest own anchor that all[k] starts with. */
  private readonly all: string[];
  private readonly own: string[][];
  private readonly ownOf = new Map<string, string[]>();
  /** The same trie as `re`, as a table for findAtWordStarts (see there). */
  private readonly classOf = new Uint8Array(128);
  private readonly classes: number;
  /** Next node = next[node * classes + class], 0 for none (node 0 is the root). */
  private readonly next: Uint32Array;
  /** Index into `all` of the anchor ending at each node, -1 for none. */
  private readonly ends: Int32Array;
  /** 1 for a node with an edge on a character other than an ASCII letter or digit. */
  private readonly goesOn: Uint8Array;
  /** Whether findNoted finds what find does (no anchor begins with '_'). */
  readonly walksWords: boolean;

  constructor(private readonly sets: ReadonlyArray<{ readonly wordTokens: ReadonlySet<string> }>) {
    const all = [...new Set(sets.flatMap((s) => [...s.wordTokens]))];
    this.all = all;
    this.re = new RegExp(`\\b${trie(all)}`, 'g');
    this.own = all.map((t) =>
      sets.map((s) => {
        for (let len = t.length; len > 0; len--)
          if (s.wordTokens.has(t.slice(0, len))) return t.slice(0, len);
        return '';
      }),
    );
    all.forEach((t, k) => this.ownOf.set(t, this.own[k] as string[]));
    let classes = 1;
    for (const t of all)
      for (let i = 0; i < t.length; i++) {
        const c = t.charCodeAt(i);
        if (this.classOf[c] === 0) this.classOf[c] = classes++;
      }
    this.classes = classes;
    // Build the trie as lists, then number its nodes breadth first: the rows a walk reads
    // most (the first two characters of every word) sit together in a few kilobytes instead
    // of being spread over the whole table, which would cost a cache miss per step.
    const children: Array<Map<number, number>> = [new Map()];
    const endOf: number[] = [-1];
    all.forEach((t, k) => {
      let node = 0;
      for (let i = 0; i < t.length; i++) {
        const cls = this.classOf[t.charCodeAt(i)] as number;
        let child = (children[node] as Map<number, number>).get(cls);
        if (child === undefined) {
          child = children.length;
          children.push(new Map());
          endOf.push(-1);
          (children[node] as Map<number, number>).set(cls, child);
        }
        node = child;
      }
      endOf[node] = k;
    });
    const order = [0];
    for (let q = 0; q < order.length; q++)
      order.push(...(children[order[q] as number] as Map<number, number>).values());
    const rank = new Int32Array(order.length);
    order.forEach((old, i) => (rank[old] = i));
    // Node 0 is the root, so "no edge" can be 0: a walk never returns to the root.
    this.next = new Uint32Array(order.length * classes);
    this.ends = new Int32Array(order.length);
    order.forEach((old, i) => {
      this.ends[i] = endOf[old] as number;
      for (const [cls, child] of children[old] as Map<number, number>)
        this.next[i * classes + cls] = rank[child] as number;
    });
    this.goesOn = new Uint8Array(order.length);
    order.forEach((old, i) => {
      for (const cls of (children[old] as Map<number, number>).keys()) {
        const c = this.classOf.indexOf(cls);
        if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90))) this.goesOn[i] = 1;
      }
    });
    this.walksWords = all.every((t) => t.charCodeAt(0) !== 95);
  }

  /** Word anchors of each set (in the constructor's order) in `lower`, a lower-cased text. */
  find(lower: string): WordAnchors[] {
    const out: WordAnchors[] = this.sets.map(() => ({ at: [], token: [] }));
    const re = this.re;
    re.lastIndex = 0;
    for (let m = re.exec(lower); m !== null; m = re.exec(lower)) {
      const own = this.ownOf.get(m[0]);
      if (own) this.add(out, own, m.index);
      re.lastIndex = m.index + 1;
    }
    return out;
  }

  /**
   * The trie walked over one word (pad[1..n], lower-cased code points, as the learned
   * layer's tokenizer reads them), packed in one number for its word cache: the longest
   * anchor that is a prefix of the word (index + 1, 0 for none) plus, when the whole word is
   * still a path of the trie, the node reached shifted left by `anchorBits` (the walk goes on past the
   * word, "i" into "i'll"). 0 when the word starts no anchor at all.
   */
  walkWord(pad: Int32Array, n: number): number {
    const { classOf, classes, next, ends } = this;
    let node = 0;
    let best = -1;
    for (let k = 1; k <= n; k++) {
      const c = pad[k] as number;
      const cls = c < 128 ? (classOf[c] as number) : 0;
      node = cls === 0 ? 0 : (next[node * classes + cls] as number);
      if (node === 0) return best + 1;
      const end = ends[node] as number;
      if (end >= 0) best = end;
    }
    // A word ends where a character other than a letter or digit follows, so the walk can
    // only go on through such an edge.
    return this.goesOn[node] === 1 ? best + 1 + node * (1 << this.anchorBits) : best + 1;
  }

  /** walkWord's packing: notes stay below this (and above it no node fits). */
  get noteLimit(): number {
    return this.ends.length * (1 << this.anchorBits);
  }

  /**
   * Bits of a note that hold an anchor's index + 1. A power of two, so that findNoted
   * unpacks a note with a mask and a shift, not an integer division per word.
   */
  private get anchorBits(): number {
    return 32 - Math.clz32(this.all.length);
  }

  /**
   * find(lower) for an all-ASCII text from the walkWord notes of its words: tokens[k] is a
   * word's index into `starts` and `ends` (where the word begins and ends), notes[k] its
   * note (under `mask`), for k < count; words noted 0 are left out. In ASCII text an anchor,
   * which begins with a letter or digit after `\b`, can only begin where a maximal run of
   * ASCII letters and digits (a word) begins and no '_' (a word character to `\b`)
   * precedes it; what the walk from there finds is the word's own note and, only when the
   * word is a whole path of the trie, the walk's continuation in the text. Only when
   * walksWords.
   */
  findNoted(
    lower: string,
    starts: Int32Array,
    ends: Int32Array,
    tokens: Int32Array,
    notes: Int32Array,
    count: number,
    mask: number,
  ): WordAnchors[] {
    const out: WordAnchors[] = this.sets.map(() => ({ at: [], token: [] }));
    const { classOf, classes, next } = this;
    const bits = this.anchorBits;
    const low = (1 << bits) - 1;
    const length = lower.length;
    for (let k = 0; k < count; k++) {
      const note = (notes[k] as number) & mask;
      if (note === 0) continue;
      const token = tokens[k] as number;
      const p = starts[token] as number;
      if (p > 0 && lower.charCodeAt(p - 1) === 95) continue;
      let best = (note & low) - 1;
      let node = note >>> bits;
      // The longest anchor along the path: what the trie regex's greedy optional groups return.
      for (let q = ends[token] as number; node !== 0 && q < length; q++) {
        const c = lower.charCodeAt(q);
        const cls = c < 128 ? (classOf[c] as number) : 0;
        node = cls === 0 ? 0 : (next[node * classes + cls] as number);
        const end = node === 0 ? -1 : (this.ends[node] as number);
        if (end >= 0) best = end;
      }
      if (best >= 0) this.add(out, this.own[best] as string[], p);
    }
    return out;
  }

  private add(out: WordAnchors[], own: string[], at: number): void {
    for (let i = 0; i < own.length; i++) {
      const t = own[i] as string;
      if (t === '') continue;
      const o = out[i] as WordAnchors;
      o.at.push(at);
      o.token.push(t);
    }
  }
}

function addWindow<C extends string>(windows: Windows<C>, s: Signal<C>, from: number, to: number): void {
  const list = windows.get(s);
  if (!list) {
    windows.set(s, [[from, to]]);
    return;
  }
  const last = list[list.length - 1];
  if (last && from <= last[1]) last[1] = Math.max(last[1], to);
  else list.push([from, to]);
}

function run<C extends string>(s: Signal<C>, text: string, from: number, to: number, out: Hit<C>[]): void {
  const slice = text.slice(from, to);
  s.re.lastIndex = 0;
  for (let m = s.re.exec(slice); m !== null; m = s.re.exec(slice)) {
    if (m[0] === '') {
      s.re.lastIndex++;
      continue;
    }
    out.push({
      category: s.category,
      weight: s.weight,
      source: s.re.source,
      start: from + m.index,
      end: from + m.index + m[0].length,
    });
  }
}

/**
 * Hits less the repeats of a signal at one offset, first kept. Offsets are grouped by
 * signal: a key joining the source (a regex source, hundreds of characters) to the offset
 * built and hashed a long string per hit, most of the cost of a text dense with hits.
 */
export function dedupeHits<C extends string>(hits: Hit<C>[]): Hit<C>[] {
  const seen = new Map<string, Set<number>>();
  return hits.filter((h) => {
    let starts = seen.get(h.source);
    if (!starts) seen.set(h.source, (starts = new Set()));
    if (starts.has(h.start)) return false;
    starts.add(h.start);
    return true;
  });
}

/**
 * Noisy-OR of the evidence near `target`, counting each signal once so that a repeated
 * phrase does not stack with itself. `related` picks which hits count as evidence.
 */
export function combine<C extends string>(
  near: NearHits<C>,
  target: Hit<C>,
  window: number,
  related: (h: Hit<C>) => boolean,
): number {
  return near.noisyOr(target.start - window, target.end + window, related);
}

/**
 * The hits of one text, found by position: scoring asks, per hit, for the hits near it, and
 * walking all of them each time made a long text quadratic (a 1 MiB message with a hit every
 * sentence took ~0.8 s in toxicity). Answers keep the hits' own order, so products and
 * once-per-signal choices come out exactly as a walk over every hit would give them.
 */
export class NearHits<C extends string> {
  private readonly byStart: number[];
  private readonly longest: number;
  /** Each hit's signal as a small number, and per signal the first hit seen by noisyOr (-1: none). */
  private readonly sourceOf: Int32Array;
  private readonly firstOf: Int32Array;
  private readonly seen: number[] = [];

  constructor(private readonly hits: readonly Hit<C>[]) {
    this.byStart = hits.map((_, i) => i).sort((a, b) => hits[a]!.start - hits[b]!.start);
    let longest = 0;
    for (const h of hits) longest = Math.max(longest, h.end - h.start);
    this.longest = longest;
    const ids = new Map<string, number>();
    this.sourceOf = new Int32Array(hits.length);
    hits.forEach((h, i) => {
      let id = ids.get(h.source);
      if (id === undefined) ids.set(h.source, (id = ids.size));
      this.sourceOf[i] = id;
    });
    this.firstOf = new Int32Array(ids.size).fill(-1);
  }

  /** Index of the first hit starting at or after `first`, in start order. */
  private lowerBound(first: number): number {
    const { hits, byStart } = this;
    let lo = 0;
    let hi = byStart.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (hits[byStart[mid]!]!.start < first) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * 1 - the product of (1 - weight) over the signals with a `related` hit touching
   * [from, to], each signal once with the weight of its first such hit, multiplied in the
   * order of those first hits: what walking touching(from, to) gives, without building and
   * sorting that list for every hit (in a text dense with hits, each has dozens near it).
   */
  noisyOr(from: number, to: number, related: (h: Hit<C>) => boolean): number {
    const { hits, byStart, sourceOf, firstOf, seen } = this;
    for (let k = this.lowerBound(from - this.longest); k < byStart.length; k++) {
      const i = byStart[k]!;
      const h = hits[i]!;
      if (h.start > to) break;
      if (h.end < from || !related(h)) continue;
      const id = sourceOf[i]!;
      const first = firstOf[id]!;
      if (first === -1) {
        firstOf[id] = i;
        seen.push(id);
      } else if (i < first) firstOf[id] = i;
    }
    if (seen.length > 1) seen.sort((a, b) => firstOf[a]! - firstOf[b]!);
    let miss = 1;
    for (const id of seen) {
      miss *= 1 - hits[firstOf[id]!]!.weight;
      firstOf[id] = -1;
    }
    seen.length = 0;
    return 1 - miss;
  }

  /** Hits that end at or after `from` and start at or before `to`, in the hits' own order. */
  touching(from: number, to: number): Hit<C>[] {
    const { hits, byStart } = this;
    // Only a hit starting within its longest length before `from` can reach it.
    const picked: number[] = [];
    for (let k = this.lowerBound(from - this.longest); k < byStart.length; k++) {
      const i = byStart[k]!;
      const h = hits[i]!;
      if (h.start > to) break;
      if (h.end >= from) picked.push(i);
    }
    picked.sort((a, b) => a - b);
    return picked.map((i) => hits[i]!);
  }
}
