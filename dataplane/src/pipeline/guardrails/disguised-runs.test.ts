import { describe, expect, it } from 'vitest';
import { disguisedWindows } from './normalize.ts';

// A leet hint inside one long run of letters and digits used to re-walk and re-test the whole
// run per match: a 16,000-character token cost ~150 ms, 300,000 characters about a minute.
describe('disguisedWindows on long runs of letters and digits', () => {
  const longRun = 'a1b'.repeat(100_000);

  it('judges a long run as one word, next to short leet words', () => {
    const text = `p4ssw0rd h4x0r k3y ${longRun}`;
    // Four leet words; the first three are within one window, so one stretch starts at 0.
    const windows = disguisedWindows(text);
    expect(windows.length).toBe(1);
    expect(windows[0]![0]).toBe(0);
  });

  it('finds nothing in one long run alone, or in a run of non-leet digits', () => {
    expect(disguisedWindows(longRun)).toEqual([]);
    expect(disguisedWindows('a2b'.repeat(100_000))).toEqual([]);
  });

  it('gives the same windows with and without the word positions as hints', () => {
    const text = `${longRun} p4ssw0rd h4x0r k3y`;
    const hints: number[] = [];
    for (let i = 0; i < text.length; i++) if (/[a-z]/i.test(text[i]!)) hints.push(i);
    expect(disguisedWindows(text, hints)).toEqual(disguisedWindows(text));
  });
});
