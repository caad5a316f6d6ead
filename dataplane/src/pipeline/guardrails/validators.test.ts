import { describe, expect, it } from 'vitest';
import {
  brCpfValid,
  cardNetwork,
  deTaxIdValid,
  esDniValid,
  ibanValid,
  isPlaceholder,
  luhnValid,
  nlBsnValid,
  shannonEntropy,
  ssnValid,
  ukNinoValid,
} from './validators.ts';

describe('luhnValid', () => {
  it('accepts valid card numbers and rejects a changed digit', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4636966187873712')).toBe(true);
    expect(luhnValid('378282246310005')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(luhnValid('4636966187873713')).toBe(false);
  });
  it('rejects empty and non-digit input', () => {
    expect(luhnValid('')).toBe(false);
    expect(luhnValid('4111-1111')).toBe(false);
  });
});

describe('cardNetwork', () => {
  it('knows the issuer ranges and lengths', () => {
    expect(cardNetwork('4111111111111111')).toBe('visa');
    expect(cardNetwork('5144811335947244')).toBe('mastercard');
    expect(cardNetwork('2221344940216022')).toBe('mastercard');
    expect(cardNetwork('342428458660545')).toBe('amex');
    expect(cardNetwork('6011386279415688')).toBe('discover');
    expect(cardNetwork('3530403787958304')).toBe('jcb');
    expect(cardNetwork('1234567812345670')).toBeUndefined();
    expect(cardNetwork('34242845866054')).toBeUndefined(); // amex with 14 digits
  });
});

describe('ibanValid', () => {
  it('checks country length and mod-97', () => {
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('GB33MDXI06301117773249')).toBe(true);
    expect(ibanValid('FR293083922592THVHNSNSRHD70')).toBe(true);
    expect(ibanValid('de89370400440532013000')).toBe(true);
  });
  it('rejects a wrong check digit, a wrong length and an unknown country', () => {
    expect(ibanValid('DE89370400440532013001')).toBe(false);
    expect(ibanValid('DE8937040044053201300')).toBe(false);
    expect(ibanValid('XX89370400440532013000')).toBe(false);
  });
});

describe('ssnValid', () => {
  it('applies the area, group and serial rules', () => {
    expect(ssnValid('581226832')).toBe(true);
    expect(ssnValid('000123456')).toBe(false);
    expect(ssnValid('666123456')).toBe(false);
    expect(ssnValid('987654320')).toBe(false);
    expect(ssnValid('123004567')).toBe(false);
    expect(ssnValid('123450000')).toBe(false);
    expect(ssnValid('078051120')).toBe(false); // the Woolworth wallet card
  });
});

describe('shannonEntropy', () => {
  it('is 0 for one repeated symbol and log2(n) for n distinct symbols', () => {
    expect(shannonEntropy('')).toBe(0);
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('abcd')).toBeCloseTo(2);
    expect(shannonEntropy('0123456789abcdef')).toBeCloseTo(4);
  });
  it('separates random keys from words', () => {
    expect(shannonEntropy('X7s1gePVlC5kigExaxQG7kWw8ASO1C7I')).toBeGreaterThan(4);
    expect(shannonEntropy('passwordpassword')).toBeLessThan(3);
  });
});

describe('national ids', () => {
  it('German tax id: check digit and the repeated-digit rule', () => {
    expect(deTaxIdValid('62174835665')).toBe(true);
    expect(deTaxIdValid('62174835664')).toBe(false);
    expect(deTaxIdValid('01234567890')).toBe(false);
  });
  it('UK NINO: prefix rules', () => {
    expect(ukNinoValid('AB123456D')).toBe(true);
    expect(ukNinoValid('QQ123456C')).toBe(false);
    expect(ukNinoValid('GB123456A')).toBe(false);
    expect(ukNinoValid('AB123456E')).toBe(false);
  });
  it('Spanish DNI/NIE letter', () => {
    expect(esDniValid('34583440L')).toBe(true);
    expect(esDniValid('34583440M')).toBe(false);
    expect(esDniValid('X1234567L')).toBe(true);
  });
  it('Dutch BSN 11-proof and Brazilian CPF', () => {
    expect(nlBsnValid('235719663')).toBe(true);
    expect(nlBsnValid('235719664')).toBe(false);
    expect(brCpfValid('23838769333')).toBe(true);
    expect(brCpfValid('23838769334')).toBe(false);
    expect(brCpfValid('11111111111')).toBe(false);
  });
});

describe('isPlaceholder', () => {
  it.each([
    '<your-api-key>',
    '${OPENAI_API_KEY}',
    '{{ vault_token }}',
    'xxxxxxxxxxxx',
    'AKIAIOSFODNN7EXAMPLE',
    'your_api_key_here',
    '********',
    'REDACTED',
    'changeme',
  ])('treats %s as a stand-in', (v) => expect(isPlaceholder(v)).toBe(true));
  it.each(['X7s1gePVlC5kigExaxQG7kWw8ASO1C7I', 'Tr0ub4dor&3xQ!', 'd81bffd291759e4bfe2a3812ba54687a44efa665'])(
    'treats %s as real',
    (v) => expect(isPlaceholder(v)).toBe(false),
  );
});
