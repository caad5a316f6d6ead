/**
 * Phone numbers as libphonenumber-js accepts them (national formats, "(0)" notation,
 * extensions) and card numbers of 12 to 19 digits across the schemes' IIN ranges.
 */
import { describe, expect, it } from 'vitest';
import { detect } from './pii.ts';

const spans = (text: string, kind: string): string[] =>
  detect(text)
    .filter((f) => f.score >= 0.5 && f.category === kind)
    .map((f) => text.slice(f.start, f.end));

/** A number with a valid Luhn check digit appended to `body`. */
function withLuhn(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let n = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
  }
  return body + String((10 - (sum % 10)) % 10);
}

describe('PII phone coverage', () => {
  it.each([
    ['Call me on +44 (0)20 7946 0958 tomorrow.', '+44 (0)20 7946 0958'],
    ['Ruf mich an: +49 (0) 30 12345678', '+49 (0) 30 12345678'],
    ['My number is 020 7946 0958.', '020 7946 0958'],
    ['Tel. 030 12345678', '030 12345678'],
    ['Appelle-moi au 06 12 34 56 78', '06 12 34 56 78'],
    ['Office: +1 415-555-2671 ext. 204', '+1 415-555-2671 ext. 204'],
    ['Phone (415) 555-2671 x204', '(415) 555-2671 x204'],
    ['Call +1-415-555-2671;ext=22 now', '+1-415-555-2671;ext=22'],
    ['phone: 0041 44 668 18 00', '0041 44 668 18 00'],
    ['Tel: +61 2 9374 4000', '+61 2 9374 4000'],
  ])('finds the phone in %s, extension included', (text, phone) => {
    expect(spans(text, 'PHONE')).toEqual([phone]);
  });

  it.each(['Released 2026-03-14.', 'Version 10.4.2.1 is out.', 'The total is 1 234 567.'])(
    'leaves %s alone',
    (text) => {
      expect(spans(text, 'PHONE')).toEqual([]);
    },
  );
});

describe('PII card coverage', () => {
  it.each([
    ['Maestro', '679999', 12],
    ['Maestro', '501800', 13],
    ['Diners', '305693', 14],
    ['Amex', '371449', 15],
    ['Visa', '411111', 16],
    ['UnionPay', '621234', 17],
    ['Discover', '601100', 19],
    ['Visa', '491761', 19],
    ['Mir', '220012', 16],
    ['JCB', '353011', 16],
  ] as const)('finds a %s number of %i digits (prefix %s) named as a card', (scheme, prefix, len) => {
    const num = withLuhn(prefix + '1234567890123'.slice(0, len - prefix.length - 1));
    expect(num).toHaveLength(len);
    const text = `My ${scheme} card: ${num}`;
    expect(spans(text, 'CREDIT_CARD')).toEqual([num]);
    // Printed in groups of four, as cards print them, it needs no naming word.
    const grouped = (num.match(/.{1,4}/g) ?? []).join(' ');
    if (len > 12) expect(spans(`Paid with ${grouped} yesterday`, 'CREDIT_CARD')).toEqual([grouped]);
  });

  it('needs the Luhn digit: the same number with a wrong check digit is not a card', () => {
    const num = withLuhn('41111111111111');
    const wrong = num.slice(0, -1) + String((Number(num.at(-1)) + 1) % 10);
    expect(spans(`card ${wrong}`, 'CREDIT_CARD')).toEqual([]);
  });

  it('takes a bare 12-digit run for a card only with a card word nearby', () => {
    const num = withLuhn('67999912345');
    expect(spans(`Tracking number ${num} is in transit`, 'CREDIT_CARD')).toEqual([]);
    expect(spans(`Maestro ${num}`, 'CREDIT_CARD')).toEqual([num]);
  });
});
