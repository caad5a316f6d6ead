/**
 * What the rule detectors need to know about each word of an ASCII text, noted by the
 * learned layer's tokenizer as it reads the text (learned/features.ts, WordAnnotator): the
 * tokenizer reads every word anyway and keeps a cache of the words it has seen, so a
 * per-word test costs one lookup per word instead of a regex pass over every character,
 * and its answer is worked out once per distinct word. A word is a maximal run of ASCII
 * letters and digits. The tests:
 *
 * - the anchor trie of the injection and toxicity sets walked from the word's first
 *   letter (AnchorUnion.walkWord), which is where, in ASCII text, an anchor can begin;
 * - whether the word contains one of the credential words that every match of the secrets
 *   detector's assignment rule begins with (secrets.ts), which, being letters, can only
 *   sit inside a word;
 * - for the disguise hints (normalize.ts): whether a letter, leet digits and a letter follow
 *   each other in the word, and whether the word is a single letter;
 * - whether a gitleaks keyword (secrets.ts, gitleaks.ts) can begin inside the word: one
 *   lies in it, or the word ends with the letters a keyword begins with and the keyword
 *   goes on with a character that can follow a word.
 */
import { ANCHOR_UNION } from './engines.ts';
import { GITLEAKS } from './gitleaks.ts';
import { KeywordAutomaton } from './keywords.ts';
import type { WordAnnotator } from './learned/features.ts';

/** Every match of secrets.ts's ASSIGNMENT rule begins with one of these (it matches lower-cased text). */
export const CREDENTIAL_WORDS = ['key', 'secret', 'token', 'passw', 'pwd', 'auth', 'credential'] as const;
const CREDENTIAL_CODES = CREDENTIAL_WORDS.map((w) => Int32Array.from(w, (c) => c.charCodeAt(0)));
/** Bit i set for a character that credential word i begins with. */
const FIRST = new Uint8Array(128);
CREDENTIAL_CODES.forEach((w, i) => (FIRST[w[0] as number] = (FIRST[w[0] as number] as number) | (1 << i)));

/** Whether pad[1..n] contains a credential word: a plain scan, no string built (this runs per new word). */
function hasCredentialWord(pad: Int32Array, n: number): boolean {
  for (let k = 1; k <= n; k++) {
    const c = pad[k] as number;
    const starts = c < 128 ? (FIRST[c] as number) : 0;
    if (starts === 0) continue;
    for (let i = 0; i < CREDENTIAL_CODES.length; i++) {
      const word = CREDENTIAL_CODES[i] as Int32Array;
      if ((starts & (1 << i)) === 0 || k + word.length - 1 > n) continue;
      let j = 1;
      while (j < word.length && pad[k + j] === word[j]) j++;
      if (j === word.length) return true;
    }
  }
  return false;
}

/**
 * Flags above every anchor note (checked below), so all fit in one non-negative int32:
 * the anchor part stays below 2 ** 26 (AnchorUnion.noteLimit, checked below), the flags take the next five bits.
 */
export const CREDENTIAL_BIT = 2 ** 26;
/**
 * A letter, leet digits (0, 1, 3, 4, 5, 7) and a letter ("1gn0re"): what normalize.ts's leet
 * hint matches, so only such words are searched for where it begins.
 */
export const LEET_BIT = 2 ** 27;
/** The word is one letter: spaced-out letters ("i g n o r e") are runs of such words. */
export const LETTER_BIT = 2 ** 28;
/** A gitleaks keyword lies inside the word. */
export const KEYWORD_BIT = 2 ** 29;
/** A gitleaks keyword may begin inside the word and go on past it, if one of KEYWORD_THEN follows. */
export const KEYWORD_HEAD_BIT = 2 ** 30;
export const ANCHOR_NOTE_MASK = CREDENTIAL_BIT - 1;

/** Whether the anchors can be found from word notes (see AnchorUnion.walksWords). */
export const NOTES_FIND_ANCHORS = ANCHOR_UNION.walksWords && ANCHOR_UNION.noteLimit <= CREDENTIAL_BIT;

const isLetter = (c: number): boolean => c >= 97 && c <= 122;
const isLeetDigit = (c: number): boolean =>
  c === 48 || c === 49 || c === 51 || c === 52 || c === 53 || c === 55;

/** Whether a letter, one or more leet digits and a letter follow each other in pad[1..n]. */
function hasLeet(pad: Int32Array, n: number): boolean {
  for (let k = 1; k < n; k++) {
    if (!isLetter(pad[k] as number) || !isLeetDigit(pad[k + 1] as number)) continue;
    let j = k + 2;
    while (j <= n && isLeetDigit(pad[j] as number)) j++;
    if (j <= n && isLetter(pad[j] as number)) return true;
  }
  return false;
}

const GITLEAKS_KEYWORDS = [...new Set(GITLEAKS.rules.flatMap((r) => r.keywords))];
const KEYWORDS = new KeywordAutomaton(GITLEAKS_KEYWORDS);
const isAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 97 && c <= 122);
/**
 * Keywords that begin with a letter or digit and go on with something else: the characters
 * that can follow their first run of letters and digits (in gitleaks' set: - _ ~ .).
 */
export const KEYWORD_THEN: readonly number[] = [
  ...new Set(
    GITLEAKS_KEYWORDS.filter((k) => isAlnum(k.charCodeAt(0))).flatMap((k) => {
      const i = [...k].findIndex((ch) => !isAlnum(ch.charCodeAt(0)));
      return i < 0 ? [] : [k.charCodeAt(i)];
    }),
  ),
];

export const WORD_NOTES: WordAnnotator = {
  id: 1,
  annotate(pad: Int32Array, n: number, truncated: boolean): number {
    const anchors = NOTES_FIND_ANCHORS ? ANCHOR_UNION.walkWord(pad, n) : 0;
    // A word cut short is checked in the text itself, so it is marked whatever it holds.
    let note = anchors;
    if (truncated || hasCredentialWord(pad, n)) note += CREDENTIAL_BIT;
    if (truncated || hasLeet(pad, n)) note += LEET_BIT;
    if (n === 1 && isLetter(pad[1] as number)) note += LETTER_BIT;
    const keywords = truncated ? 3 : KEYWORDS.wordNote(pad, n, KEYWORD_THEN);
    if ((keywords & 1) !== 0) note += KEYWORD_BIT;
    if ((keywords & 2) !== 0) note += KEYWORD_HEAD_BIT;
    return note;
  },
};
