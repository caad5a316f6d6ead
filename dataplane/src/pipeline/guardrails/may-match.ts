/**
 * Where in a text a regex made of literals, classes and `\b` could match within some slice:
 * every offset where the regex less its `\b` assertions matches (a match in a slice, whose
 * edges count as word boundaries, is a match of that looser regex in the whole text at the
 * same place). Found on first use, once per text. Sound only for a regex with no other
 * assertion (lookaround, `^`, `$`): `loosen` is for such regexes.
 */
export class MayMatch {
  private starts: number[] | undefined;

  constructor(
    private readonly loose: RegExp,
    private readonly text: string,
  ) {}

  anyIn(from: number, to: number): boolean {
    const starts = (this.starts ??= this.find());
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    return lo < starts.length && starts[lo]! < to;
  }

  private find(): number[] {
    const out: number[] = [];
    const re = this.loose;
    re.lastIndex = 0;
    for (let m = re.exec(this.text); m !== null; m = re.exec(this.text)) {
      out.push(m.index);
      re.lastIndex = m.index + 1;
    }
    return out;
  }
}

/** `re` less its `\b` assertions, global and case-insensitive (see MayMatch). */
export const loosen = (re: RegExp): RegExp => new RegExp(re.source.replace(/\\b/g, ''), 'gi');
