import { describe, expect, it } from 'vitest';
import { KeywordAutomaton } from './keywords.ts';

/** Every (start, keyword id) by plain search, in the automaton's order. */
function naive(keywords: string[], text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let start = 0; start < text.length; start++)
    keywords
      .map((k, id) => [k, id] as const)
      .filter(([k]) => text.startsWith(k, start))
      .sort((a, b) => a[0].length - b[0].length)
      .forEach(([, id]) => out.push([start, id]));
  return out;
}

function occurrences(a: KeywordAutomaton, text: string): Array<[number, number]> {
  const { found, count } = a.scan(text);
  return Array.from(found.subarray(0, count), (x) => [Math.floor(x / 65536), x % 512]);
}

describe('KeywordAutomaton', () => {
  const keywords = ['sk', 'sk_live', 'k_live_', 'ghp_', 'xghp', 's.', 'a', 'abc', 'bc', 'c'];
  const a = new KeywordAutomaton(keywords);

  it('finds overlapping and nested keywords, by start then shortest first', () => {
    expect(occurrences(a, 'ask sk_live_x xghp_ abc')).toEqual(naive(keywords, 'ask sk_live_x xghp_ abc'));
    expect(occurrences(a, 'sk_live_')).toEqual([
      [0, 0],
      [0, 1],
      [1, 2],
    ]);
  });

  it('agrees with plain search on random texts, non-ASCII characters included', () => {
    const alphabet = 'abcskxghp_l.ive Ωé\u212a';
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let t = 0; t < 300; t++) {
      const text = Array.from({ length: rand(60) }, () => alphabet[rand(alphabet.length)]).join('');
      expect(occurrences(a, text)).toEqual(naive(keywords, text));
    }
  });

  it('refuses keywords it cannot encode', () => {
    expect(() => new KeywordAutomaton(['schlüssel'])).toThrow(/ASCII only/);
    expect(() => new KeywordAutomaton([''])).toThrow(/1 to 127/);
  });
});
