/**
 * The PII detector's phone judgement on hostile shapes: each numeric run near a phone word
 * was parsed by libphonenumber up to 26 times (13 countries, strict then loose), ~5 ms CPU
 * per KB on "tel 0000000,0000000,...". Counted in parses (phoneWork), not time.
 */
import { describe, expect, it } from 'vitest';
import { detect } from './pii.ts';
import { PhoneJudge, phoneScore, phoneWork } from './phone.ts';

const six = (i: number): string => String((i * 7919) % 1_000_000).padStart(6, '0');

const SHAPES: Record<string, (i: number) => string> = {
  'tel, then short trunk-zero runs': (i) => `${i % 3 === 0 ? 'tel ' : ''}0000000,`,
  'tel 0000000000': () => 'tel 0000000000 ',
  '0(0)000000': (i) => `${i % 3 === 0 ? 'tel ' : ''}0(0)000000,`,
  'tel 2000000': () => 'tel 2000000 ',
  'tel, varied trunk-zero runs': (i) => `${i % 3 === 0 ? 'tel ' : ''}0${six(i)},`,
  'tel, varied runs': (i) => `tel 2${six(i)} `,
  'varied runs with a phone layout': (i) => `0${six(i).slice(0, 3)} ${six(i * 31).slice(0, 4)}, `,
  'varied international runs': (i) => `+${six(i)}${six(i + 1)} `,
};

function text(shape: (i: number) => string, chars: number): string {
  let s = '';
  for (let i = 0; s.length < chars; i++) s += shape(i);
  return s.slice(0, chars);
}

describe('PII phone judgement work on hostile text', () => {
  it.each(Object.entries(SHAPES))('%s: a bounded number of parses per KB', (_, shape) => {
    phoneWork.parses = 0;
    detect(text(shape, 64 * 1024));
    expect(phoneWork.parses / 64).toBeLessThanOrEqual(12 + 2);
  });

  it('judges a repeated run once per text', () => {
    phoneWork.parses = 0;
    detect(text(SHAPES['tel, then short trunk-zero runs']!, 64 * 1024));
    expect(phoneWork.parses).toBeLessThanOrEqual(26);
  });
});

describe('PII phone judgement within one text', () => {
  it('gives the same score as judging each run alone, inside the allowance', () => {
    const runs = [
      '020 7946 0000',
      '030 1234567',
      '0000000',
      '0(0)000000',
      '+44 20 7946 0000',
      '415-555-0132',
    ];
    const judge = new PhoneJudge(0);
    for (const run of runs)
      for (const context of [true, false])
        expect(judge.score(run, context), run).toBe(phoneScore(run, context));
    expect(phoneScore('030 1234567', true)).toBeGreaterThan(0);
  });

  it('past the allowance takes a run that needs a parse as a phone (fails closed)', () => {
    const judge = new PhoneJudge(0);
    phoneWork.parses = 0;
    for (let i = 1; i <= 40; i++) judge.score(`2${six(i)}`, true);
    expect(phoneWork.parses).toBe(128);
    // Not a number in any of the countries tried, named as a phone: judged a valid one.
    expect(phoneScore('0000000', true)).toBe(0);
    expect(judge.score('0000000', true)).toBe(0.8);
    // Neither named nor laid out as a phone: never parsed, so never affected.
    expect(judge.score('0123456', false)).toBe(0);
  });
});
