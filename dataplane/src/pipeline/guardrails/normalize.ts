/**
 * Undoes the cheap disguises attackers put on trigger words — zero-width characters,
 * fullwidth and mathematical letters, Cyrillic/Greek look-alikes inside Latin words,
 * l.e.t.t.e.r s p a c i n g (split back into words from a word list when no gap marks them)
 * and leetspeak — for the stretches of text that carry them, and
 * keeps a map from every normalised character back to its offset in the original, so
 * findings still point at the right span. Normalising only around a disguise keeps the
 * cost off ordinary text, which pays two cheap regex passes here and nothing more.
 */

import { findAnchors, findNotedAnchors, type SharedAnchors } from './engines.ts';
import { REUSED_TEXT_CHARS, type WordNotes } from './learned/features.ts';
import { learnedGuards, type LearnedGuards, type LearnedScores } from './learned/model.ts';
import { allAscii } from './spans.ts';
import type { TextPrep } from './types.ts';
import {
  ANCHOR_NOTE_MASK,
  CREDENTIAL_BIT,
  KEYWORD_BIT,
  KEYWORD_HEAD_BIT,
  KEYWORD_THEN,
  LEET_BIT,
  LETTER_BIT,
  NOTES_FIND_ANCHORS,
  WORD_NOTES,
} from './word-notes.ts';

export interface Normalized {
  text: string;
  /** map[i] = offset in the original of normalized character i; map[text.length] = end. */
  map: number[];
}

/** Cyrillic and Greek letters that render like Latin ones (the common part of Unicode's confusables). */
const CONFUSABLE: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ɡ: 'g',
  ո: 'n',
  ս: 'u',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  α: 'a',
  ο: 'o',
  ν: 'v',
  ρ: 'p',
  τ: 't',
  ι: 'i',
  κ: 'k',
  υ: 'u',
  ε: 'e',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};
const LEET: Record<string, string> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '@': 'a',
  $: 's',
};

const INVISIBLE_CODES =
  /[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufe00-\ufe0f\ufeff]/;

/** Characters that only a disguise puts in text: invisible, fullwidth, mathematical letters. */
const ODD_CHARS =
  /[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\uff01-\uff5e]|\ud835[\udc00-\udfff]/g;
const MIXED_SCRIPT = /[a-z][\u0370-\u03ff\u0400-\u04ff]|[\u0370-\u03ff\u0400-\u04ff][a-z]/gi;
const GREEK_OR_CYRILLIC = /[\u0370-\u03ff\u0400-\u04ff]/;
/**
 * One case-insensitive pass for two tells: a leet digit between letters ("1gn0re"),
 * or five single letters joined by separators ("i g n o r e").
 */
const HINT = /[a-z](?:[013457]+[a-z]|[ .*_-][a-z][ .*_-][a-z][ .*_-][a-z][ .*_-][a-z](?![a-z]))/gi;
const HINT_AT = new RegExp(HINT.source, 'iy');
const isAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
const LEET_WORD = /^(?:[a-z]*[013457][a-z]+[013457][a-z013457]*|[a-z]+[013457][a-z]+)$/;
/**
 * Single letters joined by separators, at least three ("i g n o r e", "y-o-u-r"); inside a
 * run, a wider gap ("e   a l l") or a different separator ("d-o y-o-u") ends a word.
 * Only stretches already marked as disguised get here, so three letters is enough.
 */
const SPACED = /(?<![a-z0-9])[a-z](?:(?:[ .\-_*]| {2,})[a-z](?![a-z0-9])){2,}/gi;
const LEET_TOKEN = /[a-z0-9@$]{2,}/gi;
const WINDOW = 400;

function pushWindow(windows: Array<[number, number]>, text: string, at: number, len: number): void {
  windows.push([Math.max(0, at - WINDOW), Math.min(text.length, at + len + WINDOW)]);
}

/**
 * Stretches of `text` worth normalising, merged. A lone leet-looking word ("log4j") does not
 * count; three within one window do. Each hint is a cheap pass; most text fails them all.
 */
export function disguisedWindows(text: string, hints?: number[]): Array<[number, number]> {
  // exec loops over the text as it is: most texts are short chat messages, where iterators
  // and a lower-cased copy would cost more than the passes themselves.
  const raw: Array<[number, number]> = [];
  // Odd characters and Greek or Cyrillic letters are all outside ASCII.
  if (!allAscii(text)) {
    ODD_CHARS.lastIndex = 0;
    for (let m = ODD_CHARS.exec(text); m !== null; m = ODD_CHARS.exec(text))
      pushWindow(raw, text, m.index, m[0].length);
    if (GREEK_OR_CYRILLIC.test(text)) {
      MIXED_SCRIPT.lastIndex = 0;
      for (let m = MIXED_SCRIPT.exec(text); m !== null; m = MIXED_SCRIPT.exec(text))
        pushWindow(raw, text, m.index, m[0].length);
    }
  }
  const leet: number[] = [];
  // With `hints`, the offsets where a HINT match can begin (see hintStarts), the regex is
  // tried there only, in order and never inside the last match: the same matches.
  HINT.lastIndex = 0;
  let next = 0;
  let resume = 0;
  // A leet match lies inside one run of letters and digits, and every match in that run
  // names the same run: judging it once keeps a long run linear (each match re-walking and
  // re-testing the whole run made a 16,000-character token cost ~150 ms).
  let runEnd = -1;
  for (;;) {
    let m: RegExpExecArray | null = null;
    if (!hints) m = HINT.exec(text);
    else
      for (; m === null && next < hints.length; next++) {
        const at = hints[next] as number;
        if (at < resume) continue;
        HINT_AT.lastIndex = at;
        m = HINT_AT.exec(text);
      }
    if (m === null) break;
    resume = m.index + m[0].length;
    const at = m.index;
    if (!/\d/.test(m[0])) {
      pushWindow(raw, text, at, m[0].length);
      continue;
    }
    if (at < runEnd) continue;
    let s = at;
    while (s > 0 && isAlnum(text.charCodeAt(s - 1))) s--;
    let e = at + m[0].length;
    while (e < text.length && isAlnum(text.charCodeAt(e))) e++;
    runEnd = e;
    if (!LEET_WORD.test(text.slice(s, e).toLowerCase()) || leet[leet.length - 1] === s) continue;
    leet.push(s);
    const n = leet.length;
    const first = leet[n - 3] ?? 0;
    if (n >= 3 && s - first <= WINDOW) pushWindow(raw, text, first, e - first);
  }
  if (raw.length === 0) return raw;
  raw.sort((a, b) => a[0] - b[0]);
  const windows: Array<[number, number]> = [];
  for (const [from, to] of raw) {
    const last = windows[windows.length - 1];
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else windows.push([from, to]);
  }
  return windows;
}

/** 1 at the ASCII codes of KEYWORD_THEN: words() reads ASCII texts only, where no other can follow. */
const KEYWORD_GOES_ON = new Uint8Array(128);
for (const c of KEYWORD_THEN) KEYWORD_GOES_ON[c] = 1;

const emptyNotes = (): WordNotes => ({
  annotator: WORD_NOTES,
  tokens: new Int32Array(0),
  values: new Int32Array(0),
  count: 0,
});

/**
 * Reused for the bytes of an ASCII text and the notes on its words (one text at a time), for
 * texts up to REUSED_TEXT_CHARS: a longer one gets its own, so it does not size these for good.
 */
let sharedBytes = Buffer.allocUnsafe(0);
const sharedNotes = emptyNotes();

/** Bytes of the scan buffers held between texts, here and in the learned scorer (for tests). */
export function retainedScanBytes(): number {
  return (
    sharedBytes.byteLength +
    sharedNotes.tokens.byteLength +
    sharedNotes.values.byteLength +
    learnedGuards().retainedBytes
  );
}

/** Shared preparation of one text for the detectors (see TextPrep), each part done on first use. */
class PreparedText implements TextPrep {
  private windows: Array<[number, number]> | undefined;
  private scores: LearnedScores | undefined;
  private found: SharedAnchors | undefined;
  private lowered: string | undefined;
  private credentials: Array<[number, number]> | undefined;
  private keywords: Array<[number, number]> | undefined;
  /** Where a disguise hint can begin, when the tokenizer's notes told (see hintStarts). */
  private hints: number[] | undefined;

  constructor(private readonly text: string) {}

  disguised(): Array<[number, number]> {
    return (this.windows ??= disguisedWindows(this.text, this.hints));
  }

  learned(): LearnedScores {
    if (!this.scores) this.words();
    return this.scores as LearnedScores;
  }

  lower(): string {
    return (this.lowered ??= this.text.toLowerCase());
  }

  anchors(): SharedAnchors {
    if (!this.found) this.words();
    return this.found as SharedAnchors;
  }

  credentialWords(): Array<[number, number]> | undefined {
    return this.credentials;
  }

  keywordWords(): Array<[number, number]> | undefined {
    return this.keywords;
  }

  /**
   * The learned scores and the word anchors together: a detector that reads one reads the
   * other, and in ASCII text the tokenizer's pass notes what the anchors need on each word
   * (word-notes.ts), so they need no pass of their own. The notes point into the model's
   * token buffer, valid only until its next call, so everything is taken from them now.
   */
  private words(): void {
    const guards = learnedGuards();
    try {
      this.notedWords(guards);
    } finally {
      guards.release();
    }
  }

  /** words(), given the guards; a long text's buffers are released after it returns. */
  private notedWords(guards: LearnedGuards): void {
    const text = this.text;
    if (!allAscii(text)) {
      this.scores ??= guards.score(text);
      this.found ??= findAnchors(this.lower());
      return;
    }
    let bytes = sharedBytes;
    let notes = sharedNotes;
    if (text.length > REUSED_TEXT_CHARS) {
      bytes = Buffer.allocUnsafe(text.length + 1);
      notes = emptyNotes();
    } else if (bytes.length <= text.length) {
      const size = Math.min(Math.max(text.length + 1, bytes.length * 2), REUSED_TEXT_CHARS + 1);
      bytes = sharedBytes = Buffer.allocUnsafe(size);
    }
    bytes.write(text, 0, text.length, 'latin1');
    const scores = guards.scoreAscii(bytes, text.length, notes);
    this.scores ??= scores;
    const { starts, ends, count: words } = guards.tokens;
    const lower = this.lower();
    this.credentials = [];
    this.keywords = [];
    const { tokens, values, count } = notes;
    for (let k = 0; k < count; k++) {
      const note = values[k] as number;
      if ((note & (CREDENTIAL_BIT | KEYWORD_BIT | KEYWORD_HEAD_BIT)) === 0) continue;
      const token = tokens[k] as number;
      const end = ends[token] as number;
      // A keyword that runs on past the word needs one of KEYWORD_THEN right after it
      // (most words noted so, "the" among them, have none: no span is made for them).
      const keyword =
        (note & KEYWORD_BIT) !== 0 ||
        ((note & KEYWORD_HEAD_BIT) !== 0 && KEYWORD_GOES_ON[lower.charCodeAt(end) & 0x7f] === 1);
      const credential = (note & CREDENTIAL_BIT) !== 0;
      if (!keyword && !credential) continue;
      const span: [number, number] = [starts[token] as number, end];
      if (credential) this.credentials.push(span);
      if (keyword) this.keywords.push(span);
    }
    this.hints ??= hintStarts(this.lower(), starts, ends, words, notes);
    this.found ??= NOTES_FIND_ANCHORS
      ? findNotedAnchors(this.lower(), starts, ends, notes, ANCHOR_NOTE_MASK)
      : findAnchors(this.lower());
  }
}

const isLeetCode = (d: number): boolean =>
  d === 48 || d === 49 || d === 51 || d === 52 || d === 53 || d === 55;

/**
 * Every offset of an ASCII text where HINT can begin, in order, from its tokenizer's notes
 * (word-notes.ts). A leet hint lies inside one word, a letter, leet digits and a letter: the
 * words noted LEET_BIT are searched for those. A spaced hint, a letter then four more each
 * after one separator, begins at the last letter of a word followed, one character apart
 * each, by three one-letter words and a fourth word: found from the runs of words noted
 * LETTER_BIT. Both checks are loose; the regex decides at each offset.
 */
function hintStarts(
  lower: string,
  starts: Int32Array,
  ends: Int32Array,
  words: number,
  notes: WordNotes,
): number[] {
  const at: number[] = [];
  const { tokens, values, count } = notes;
  for (let k = 0; k < count; k++) {
    const note = values[k] as number;
    const token = tokens[k] as number;
    if ((note & LEET_BIT) !== 0) {
      // Where HINT's leet branch matches: a letter, leet digits, a letter (its spaced branch
      // needs a separator after the letter, so cannot match here either).
      const end = ends[token] as number;
      for (let i = starts[token] as number; i + 1 < end; i++) {
        const c = lower.charCodeAt(i);
        if (c < 97 || c > 122 || !isLeetCode(lower.charCodeAt(i + 1))) continue;
        let j = i + 2;
        while (j < end && isLeetCode(lower.charCodeAt(j))) j++;
        const l = lower.charCodeAt(j);
        if (j < end && l >= 97 && l <= 122) at.push(i);
      }
    }
    // The first of three one-letter words in a row (consecutive words, one character apart).
    if ((note & LETTER_BIT) === 0 || token === 0 || k + 2 >= count) continue;
    if (tokens[k + 1] !== token + 1 || tokens[k + 2] !== token + 2) continue;
    if (((values[k + 1] as number) & (values[k + 2] as number) & LETTER_BIT) === 0) continue;
    const before = token - 1;
    if (starts[token] !== (ends[before] as number) + 1) continue;
    if (
      starts[token + 1] !== (ends[token] as number) + 1 ||
      starts[token + 2] !== (ends[token + 1] as number) + 1
    )
      continue;
    if (token + 3 >= words || starts[token + 3] !== (ends[token + 2] as number) + 1) continue;
    at.push((ends[before] as number) - 1);
  }
  // Leet offsets come in word order, spaced ones at an earlier word: sort once.
  return at.sort((a, b) => a - b);
}

/** A class rather than closures: this runs for every text of every request. */
export function prepare(text: string): TextPrep {
  return new PreparedText(text);
}

function hasLatinAndOther(word: string): boolean {
  return /[a-z]/i.test(word) && /[\u0370-\u03ff\u0400-\u04ff]/.test(word);
}

/**
 * Normalises text[from, to); offsets in the map are absolute. `words`, a sticky regex of
 * known words (longest first), splits a run spaced letter by letter with no word gaps
 * ("f u c k i n g i d i o t") back into words.
 */
export function normalizeWindow(text: string, from: number, to: number, words?: RegExp): Normalized {
  let out = '';
  const map: number[] = [];
  const slice = text.slice(from, to);
  let offset = from;
  for (const word of slice.split(/(\s+)/)) {
    const mixed = hasLatinAndOther(word);
    for (let i = 0; i < word.length;) {
      const cp = word.codePointAt(i) ?? 0;
      // ASCII is kept as it is (no invisible, combining, fullwidth, mathematical or look-alike
      // letter is ASCII), without a one-character string and a regex test for each.
      if (cp < 0x80) {
        out += word[i];
        map.push(offset + i);
        i++;
        continue;
      }
      const ch = String.fromCodePoint(cp);
      const at = offset + i;
      i += ch.length;
      if (INVISIBLE_CODES.test(ch) || (cp >= 0x300 && cp <= 0x36f)) continue;
      let rep = ch;
      if (cp >= 0xff01 && cp <= 0xff5e) rep = String.fromCharCode(cp - 0xfee0);
      else if (cp >= 0x1d400 && cp <= 0x1d7ff) rep = ch.normalize('NFKC');
      else if (mixed && CONFUSABLE[ch] !== undefined) rep = CONFUSABLE[ch];
      for (let k = 0; k < rep.length; k++) {
        out += rep[k];
        map.push(at);
      }
    }
    offset += word.length;
  }
  map.push(to);
  const collapsed = collapseSpacing({ text: out, map }, words);
  // Same length in and out, so the map survives the leet substitution untouched.
  return { text: collapsed.text.replace(LEET_TOKEN, deLeet), map: collapsed.map };
}

function deLeet(token: string): string {
  // Units and ordinals ("4th", "10ms", "5px") are numbers, not disguised words.
  if (
    !/[a-z].*[a-z]/i.test(token) ||
    !/[013457@$]/.test(token) ||
    /^\d+(?:st|nd|rd|th|am|pm|px|em|ms|kb|mb|gb|ks|hz)$/i.test(token)
  )
    return token;
  let s = '';
  for (const ch of token) s += LEET[ch] ?? ch;
  return s;
}

/** "i g n o r e" / "i.g.n.o.r.e" -> "ignore", keeping each letter's original offset. */
function collapseSpacing(n: Normalized, words: RegExp | undefined): Normalized {
  SPACED.lastIndex = 0;
  if (!SPACED.test(n.text)) return n;
  // matchAll starts from lastIndex, which the test above moved.
  SPACED.lastIndex = 0;
  let text = '';
  // Whether `text` / a run's letters end in a space, kept by hand: endsWith on a string built
  // by += flattens it, so asking after every append re-copied the text (quadratic in one long
  // run of "i g n o r e ").
  let textSpace = false;
  const map: number[] = [];
  let last = 0;
  const keep = (i: number): void => {
    const ch = n.text[i] ?? '';
    text += ch;
    textSpace = ch === ' ';
    map.push(n.map[i] ?? 0);
  };
  for (const m of n.text.matchAll(SPACED)) {
    const start = m.index ?? 0;
    for (let i = last; i < start; i++) keep(i);
    const run = m[0];
    // The separator used most is the one inside words; any other one is a gap between words.
    const seps = run.replace(/[a-z]/gi, '');
    const inWord = mostCommon(seps.replace(/ {2,}/g, ''));
    let letters = '';
    let lettersSpace = false;
    const at: number[] = [];
    let gaps = false;
    for (let i = 0; i < run.length; i++) {
      const ch = run[i] ?? '';
      if (/[a-z]/i.test(ch)) {
        letters += ch;
        lettersSpace = false;
        at.push(start + i);
        continue;
      }
      const wide = ch === ' ' && run[i + 1] === ' ';
      if (wide || ch !== inWord) {
        if (!lettersSpace) {
          letters += ' ';
          lettersSpace = true;
          at.push(start + i);
          gaps = true;
        }
        while (run[i + 1] === ' ') i++;
      }
    }
    const cuts = gaps || !words ? new Set<number>() : segment(letters, words);
    for (let i = 0; i < letters.length; i++) {
      if (cuts.has(i) && i > 0 && !textSpace) {
        text += ' ';
        map.push(n.map[at[i] ?? 0] ?? 0);
      }
      text += letters[i];
      textSpace = letters[i] === ' ';
      map.push(n.map[at[i] ?? 0] ?? 0);
    }
    last = start + run.length;
  }
  for (let i = last; i < n.text.length; i++) keep(i);
  map.push(n.map[n.text.length] ?? 0);
  return { text, map };
}

function mostCommon(chars: string): string {
  const counts = new Map<string, number>();
  let best = ' ';
  let most = 0;
  for (const ch of chars) {
    const c = (counts.get(ch) ?? 0) + 1;
    counts.set(ch, c);
    if (c > most) {
      most = c;
      best = ch;
    }
  }
  return best;
}

/**
 * Word starts and ends in a run of letters, by greedy left-to-right matching of known
 * words; letters between known words stay together as one unknown word.
 */
function segment(letters: string, words: RegExp): Set<number> {
  const cuts = new Set<number>();
  const lower = letters.toLowerCase();
  for (let i = 0; i < lower.length;) {
    words.lastIndex = i;
    const m = words.exec(lower);
    if (m && m[0] !== '') {
      cuts.add(i);
      cuts.add(i + m[0].length);
      i += m[0].length;
    } else i++;
  }
  return cuts;
}

/** A sticky, longest-first alternation of `list` for normalizeWindow's `words`. */
export function wordSegmenter(list: readonly string[]): RegExp {
  const sorted = [...new Set(list.map((w) => w.toLowerCase()))]
    .filter((w) => /^[a-z]{3,}$/.test(w))
    .sort((a, b) => b.length - a.length);
  return new RegExp(`(?:${sorted.join('|')})`, 'y');
}
