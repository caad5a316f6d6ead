/**
 * Checksums and structural rules that turn "looks like a number" into "is one". Every
 * validator takes the candidate with separators already stripped unless it says otherwise.
 */

/** Luhn (mod 10) over a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let n = digits.charCodeAt(i) - 48;
    if (n < 0 || n > 9) return false;
    if (double) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * Card issuer by IIN prefix and length; undefined when no network issues such a number.
 * Only networks whose ranges are public and stable are listed.
 */
export function cardNetwork(digits: string): string | undefined {
  const len = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p3 = Number(digits.slice(0, 3));
  const p4 = Number(digits.slice(0, 4));
  const p6 = Number(digits.slice(0, 6));
  if (digits[0] === '4' && (len === 13 || len === 16 || len === 19)) return 'visa';
  if (((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) && len === 16) return 'mastercard';
  if ((p2 === 34 || p2 === 37) && len === 15) return 'amex';
  if (
    (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) &&
    len >= 16 &&
    len <= 19
  )
    return 'discover';
  if (p4 >= 3528 && p4 <= 3589 && len >= 16 && len <= 19) return 'jcb';
  if (((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) && len >= 14 && len <= 19)
    return 'diners';
  if (p2 === 62 && len >= 16 && len <= 19) return 'unionpay';
  if (p4 >= 2200 && p4 <= 2204 && len >= 16 && len <= 19) return 'mir';
  if ((p2 === 81 || p2 === 82 || p3 === 508) && len === 16) return 'rupay';
  if ((p2 === 50 || (p2 >= 56 && p2 <= 69)) && len >= 12 && len <= 19) return 'maestro';
  return undefined;
}

/** IBAN lengths per country (SWIFT IBAN registry). */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
};

/** ISO 13616: known country, registry length, and the mod-97 remainder of 1. */
export function ibanValid(compact: string): boolean {
  const iban = compact.toUpperCase();
  const expected = IBAN_LENGTHS[iban.slice(0, 2)];
  if (expected === undefined || iban.length !== expected) return false;
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i);
    // Letters count as two digits (A=10 .. Z=35); fold them in one at a time.
    if (c >= 65) rem = (rem * 100 + (c - 55)) % 97;
    else rem = (rem * 10 + (c - 48)) % 97;
  }
  return rem === 1;
}

/**
 * US SSN rules since 2011 randomisation: area not 000, 666 or 9xx; group not 00; serial not
 * 0000. The two numbers famously printed on sample cards are refused as well.
 */
export function ssnValid(nine: string): boolean {
  if (!/^\d{9}$/.test(nine)) return false;
  const area = nine.slice(0, 3);
  if (area === '000' || area === '666' || area[0] === '9') return false;
  if (nine.slice(3, 5) === '00' || nine.slice(5) === '0000') return false;
  return nine !== '078051120' && nine !== '219099999';
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/**
 * German Steuer-ID: 11 digits, no leading zero, ISO 7064 MOD 11,10 check digit, and in the
 * first ten digits exactly one digit repeated (twice or three times).
 */
export function deTaxIdValid(d: string): boolean {
  if (!/^[1-9]\d{10}$/.test(d)) return false;
  const counts = new Map<string, number>();
  for (const ch of d.slice(0, 10)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const repeated = [...counts.values()].filter((n) => n > 1);
  if (repeated.length !== 1 || (repeated[0] ?? 0) > 3) return false;
  let product = 10;
  for (let i = 0; i < 10; i++) {
    let sum = (Number(d[i]) + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = 11 - product === 10 ? 0 : 11 - product;
  return check === Number(d[10]);
}

/** UK National Insurance number (HMRC allocation rules on the two-letter prefix). */
export function ukNinoValid(compact: string): boolean {
  const m = /^([A-CEGHJ-PR-TW-Z])([A-CEGHJ-NPR-TW-Z])\d{6}[A-D]$/.exec(compact.toUpperCase());
  if (!m) return false;
  return !['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'].includes(`${m[1]}${m[2]}`);
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
/** Spanish DNI (8 digits + letter) and NIE (X/Y/Z + 7 digits + letter): mod-23 letter. */
export function esDniValid(compact: string): boolean {
  const s = compact.toUpperCase();
  const m = /^([XYZ]\d{7}|\d{8})([A-Z])$/.exec(s);
  if (!m || m[1] === undefined) return false;
  const num = Number(m[1].replace(/^X/, '0').replace(/^Y/, '1').replace(/^Z/, '2'));
  return DNI_LETTERS[num % 23] === m[2];
}

/** Dutch BSN: nine digits passing the "11-proof" (last weight -1). */
export function nlBsnValid(d: string): boolean {
  if (!/^\d{9}$/.test(d) || d === '000000000') return false;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * Number(d[i]);
  sum -= Number(d[8]);
  return sum % 11 === 0;
}

/** Brazilian CPF: two mod-11 check digits; all-same-digit numbers are refused. */
export function brCpfValid(d: string): boolean {
  if (!/^\d{11}$/.test(d) || /^(\d)\1{10}$/.test(d)) return false;
  const check = (len: number): number => {
    let sum = 0;
    for (let i = 0; i < len; i++) sum += Number(d[i]) * (len + 1 - i);
    const r = (sum * 10) % 11;
    return r === 10 ? 0 : r;
  };
  return check(9) === Number(d[9]) && check(10) === Number(d[10]);
}

/**
 * Values that announce themselves as stand-ins: templating, masks, "your-key-here" and the
 * credentials vendors publish in their docs. Secrets matching this are not secrets.
 */
const PLACEHOLDER =
  /^[<{[(]|[>}\])]$|\$\{|\{\{|^\$[A-Z_]|^%[A-Z_]+%$|x{4,}|X{4,}|\*{3,}|\.{3}|•{3,}|(?:^|[^a-z])(?:your|my|the)[-_ ]?(?:api|access|secret|key|token|pass)|example|sample|placeholder|changeme|change[-_]me|redacted|dummy|insert[-_ ]|replace[-_ ]?me|^(?:null|none|undefined|true|false|secret|password|token|string|value|test)$/i;

export function isPlaceholder(value: string): boolean {
  if (PLACEHOLDER.test(value)) return true;
  // Long runs of one character ("0000000000", "aaaaaaa") or a keyboard walk.
  if (/(.)\1{5,}/.test(value)) return true;
  return /0123456789|abcdefghij|qwertyuiop/i.test(value);
}
