/**
 * Where in a text a regex made of literals, classes and `\b` could match within some slice,
 * found in one pass per text. A match inside a slice [from, to) reads the same characters
 * as in the whole text, and its `\b` assertions see the same neighbours except at the
 * slice's edges, where the slice counts as bounded. So:
 * - the regex with every `\b` that can fall at a match's end removed (`loosen`) matches in
 *   the whole text at every offset > from where the original matches in the slice;
 * - a match starting exactly at `from` is tested directly on the slice, anchored there, and
 *   only when the character before `from` is a word character (else `\b` sees the same).
 * The leading `\b` of each alternative is kept: without it, a `\w*` alternative starts at
 * every "flag" inside "flagflag..." and reads to the word's end, quadratic in the word.
 * Sound only for a case-insensitive regex with no other assertion (lookaround, `^`, `$`).
 */
export const mayMatchWork = { matchedChars: 0 };

export class MayMatch {
  private starts: number[] | undefined;
  private readonly loose: RegExp;
  private readonly anchored: RegExp;

  constructor(
    re: RegExp,
    private readonly text: string,
  ) {
    this.loose = loosen(re);
    this.anchored = new RegExp(re.source, 'iy');
  }

  anyIn(from: number, to: number): boolean {
    const starts = (this.starts ??= this.find());
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    if (lo < starts.length && starts[lo]! < to) return true;
    if (from === 0 || !WORD.test(this.text[from - 1]!)) return false;
    this.anchored.lastIndex = 0;
    return this.anchored.test(this.text.slice(from, to));
  }

  private find(): number[] {
    const out: number[] = [];
    const re = this.loose;
    re.lastIndex = 0;
    for (let m = re.exec(this.text); m !== null; m = re.exec(this.text)) {
      out.push(m.index);
      mayMatchWork.matchedChars += m[0].length;
      re.lastIndex = m.index + 1;
    }
    return out;
  }
}

const WORD = /\w/;

/**
 * `re` less every `\b` but the one that opens a top-level alternative (only ever tested at
 * a match's start), global and case-insensitive (see MayMatch).
 */
export function loosen(re: RegExp): RegExp {
  const src = re.source;
  let out = '';
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const pair = src.slice(i, i + 2);
      i++;
      if (pair !== '\\b' || inClass) {
        out += pair;
        continue;
      }
      const leading = depth === 0 && (i === 1 || (src[i - 2] === '|' && src[i - 3] !== '\\'));
      if (leading) out += pair;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    out += c;
  }
  return new RegExp(out, 'gi');
}
