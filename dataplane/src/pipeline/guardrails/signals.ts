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
  /** Per anchor of the union: the longest anchor of each set that it starts with, '' for none. */
  private readonly own = new Map<string, string[]>();

  constructor(private readonly sets: ReadonlyArray<{ readonly wordTokens: ReadonlySet<string> }>) {
    const all = [...new Set(sets.flatMap((s) => [...s.wordTokens]))];
    this.re = new RegExp(`\\b${trie(all)}`, 'g');
    for (const t of all)
      this.own.set(
        t,
        sets.map((s) => {
          for (let len = t.length; len > 0; len--)
            if (s.wordTokens.has(t.slice(0, len))) return t.slice(0, len);
          return '';
        }),
      );
  }

  /** Word anchors of each set (in the constructor's order) in `lower`, a lower-cased text. */
  find(lower: string): WordAnchors[] {
    const out: WordAnchors[] = this.sets.map(() => ({ at: [], token: [] }));
    const re = this.re;
    re.lastIndex = 0;
    for (let m = re.exec(lower); m !== null; m = re.exec(lower)) {
      const own = this.own.get(m[0]);
      if (own)
        for (let i = 0; i < own.length; i++) {
          const t = own[i] as string;
          if (t === '') continue;
          const o = out[i] as WordAnchors;
          o.at.push(m.index);
          o.token.push(t);
        }
      re.lastIndex = m.index + 1;
    }
    return out;
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

export function dedupeHits<C extends string>(hits: Hit<C>[]): Hit<C>[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const key = `${h.source}\u0000${h.start}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Noisy-OR of the evidence near `target`, counting each signal once so that a repeated
 * phrase does not stack with itself. `related` picks which hits count as evidence.
 */
export function combine<C extends string>(
  hits: Hit<C>[],
  target: Hit<C>,
  window: number,
  related: (h: Hit<C>) => boolean,
): number {
  const used = new Set<string>();
  let miss = 1;
  for (const h of hits) {
    if (h.end < target.start - window || h.start > target.end + window || !related(h)) continue;
    const key = h.source;
    if (used.has(key)) continue;
    used.add(key);
    miss *= 1 - h.weight;
  }
  return 1 - miss;
}
