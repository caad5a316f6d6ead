/**
 * BERT's uncased tokenizer (basic split + WordPiece), as all-MiniLM-L6-v2 was trained with:
 * lower case, accents stripped, CJK characters and punctuation split off, then each word cut
 * greedily into the longest vocabulary pieces ("##" marks a continuation).
 */

export interface WordPieceVocab {
  ids: ReadonlyMap<string, number>;
  cls: number;
  sep: number;
  unk: number;
}

export function parseVocab(text: string): WordPieceVocab {
  const ids = new Map<string, number>();
  text.split('\n').forEach((line, i) => {
    // A CRLF copy (Windows autocrlf) reads the same: no token ends in a carriage return.
    const token = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (token !== '' && !ids.has(token)) ids.set(token, i);
  });
  const need = (t: string): number => {
    const id = ids.get(t);
    if (id === undefined) throw new Error(`vocabulary lacks ${t}`);
    return id;
  };
  return { ids, cls: need('[CLS]'), sep: need('[SEP]'), unk: need('[UNK]') };
}

// A word longer than this becomes one [UNK], as in BERT (it is almost never a real word).
const MAX_WORD_CHARS = 100;

const isPunct = (cp: number): boolean =>
  (cp >= 33 && cp <= 47) ||
  (cp >= 58 && cp <= 64) ||
  (cp >= 91 && cp <= 96) ||
  (cp >= 123 && cp <= 126) ||
  /\p{P}/u.test(String.fromCodePoint(cp));

const isCjk = (cp: number): boolean =>
  (cp >= 0x4e00 && cp <= 0x9fff) ||
  (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x20000 && cp <= 0x2a6df) ||
  (cp >= 0x2a700 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) ||
  (cp >= 0x2f800 && cp <= 0x2fa1f);

/** Lower-cased, accent-free words and single punctuation/CJK characters. */
export function basicTokens(text: string): string[] {
  const clean = text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{Mn}/gu, '');
  const out: string[] = [];
  let word = '';
  const flush = (): void => {
    if (word) out.push(word);
    word = '';
  };
  for (const ch of clean) {
    const cp = ch.codePointAt(0) as number;
    if (cp === 0 || cp === 0xfffd || /\p{Cc}|\p{Cf}/u.test(ch)) {
      // Tabs and newlines are control characters too but separate words.
      if (ch === '\t' || ch === '\n' || ch === '\r') flush();
      continue;
    }
    if (/\s/u.test(ch)) flush();
    else if (isPunct(cp) || isCjk(cp)) {
      flush();
      out.push(ch);
    } else word += ch;
  }
  flush();
  return out;
}

/** [CLS] pieces… [SEP], at most `maxTokens` ids (the start of the text is kept). */
export function encodeWordPiece(text: string, vocab: WordPieceVocab, maxTokens: number): number[] {
  const ids = [vocab.cls];
  const room = maxTokens - 1;
  for (const word of basicTokens(text)) {
    if (ids.length >= room) break;
    if ([...word].length > MAX_WORD_CHARS) {
      ids.push(vocab.unk);
      continue;
    }
    const pieces: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let id: number | undefined;
      while (end > start) {
        id = vocab.ids.get((start > 0 ? '##' : '') + word.slice(start, end));
        if (id !== undefined) break;
        end--;
      }
      if (id === undefined) {
        pieces.length = 0;
        pieces.push(vocab.unk);
        break;
      }
      pieces.push(id);
      start = end;
    }
    for (const p of pieces) if (ids.length < room) ids.push(p);
  }
  ids.push(vocab.sep);
  return ids;
}
