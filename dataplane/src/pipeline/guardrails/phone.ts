/**
 * Phone-number judgement for a numeric run found by the PII scanner. Numbering plans are
 * per country and change, so validity comes from libphonenumber-js (Google's metadata,
 * "min" build: lengths and leading digits, no carrier data). The rules here only decide how
 * much format and context evidence a run needs before it is asked.
 */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/min';
import { checkPhone } from './phone-metadata.ts';

/** Countries tried for a national number that starts with a trunk 0. */
const TRUNK_ZERO: CountryCode[] = [
  'GB',
  'DE',
  'FR',
  'IT',
  'NL',
  'BE',
  'AT',
  'CH',
  'IE',
  'SE',
  'AU',
  'IN',
  'TR',
];
/** Countries without a trunk prefix, tried only when the words around ask for a phone. */
const NO_TRUNK: CountryCode[] = ['US', 'ES', 'IT', 'PT', 'PL', 'DK', 'NO', 'GR'];

const NANP_SHAPE = /^(?:\+?1[ .-]?)?(?:\(\d{3}\)\s?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;
/** dd.dd.dddd, dddd-dd-dd and friends: dates written with any separator. */
const DATE_SHAPE = /^(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}[./-]\d{1,2}[./-]\d{1,2})$/;

/**
 * For tests: numbers parsed by libphonenumber (a parse and its checks cost ~8-40 µs), and
 * numbers checked against the metadata alone past the allowance (~1-2 µs: lengths and regexes).
 */
export const phoneWork = { parses: 0, checks: 0 };

/**
 * Parses a text may spend on phone judgements: a fixed allowance and this many per KB
 * (12/KB: ~1 ms CPU per KB on distinct runs after "tel", at ~40 µs a parse there).
 */
const FREE_PARSES = 128;
const PARSES_PER_KB = 12;

/**
 * Phone judgements for one text. The same run is judged once (a hostile text repeats one
 * run thousands of times). Only runs with a phone's layout or a phone word before them are
 * judged at all. Past the text's parse allowance (128 parses plus 12 per KB; an invalid run
 * takes up to 13), a run is checked against the numbering plan's lengths and national number
 * pattern instead of parsed: what libphonenumber's "min" validity checks, without its parse
 * (national prefix rules are tried both ways, so the check errs towards a phone).
 */
export class PhoneJudge {
  private readonly memo = new Map<string, number>();
  private left: number;

  constructor(textLength: number) {
    this.left = FREE_PARSES + Math.floor((textLength / 1024) * PARSES_PER_KB);
  }

  score(run: string, context: boolean): number {
    const key = (context ? '1' : '0') + run;
    let s = this.memo.get(key);
    if (s === undefined) {
      s = phoneScore(run, context, this);
      this.memo.set(key, s);
    }
    return s;
  }

  /** The number as libphonenumber reads it for `country`; past the allowance, as its metadata does. */
  parse(text: string, country: CountryCode | undefined): Parsed {
    if (this.left <= 0) {
      phoneWork.checks++;
      return checkPhone(text, country);
    }
    this.left--;
    return parseOnce(text, country);
  }
}

export interface Parsed {
  valid: boolean;
  possible: boolean;
}
const NOT_A_NUMBER: Parsed = { valid: false, possible: false };

/** Parses on their own (no memo, no allowance), for a caller judging one run. */
const UNBOUNDED = { parse: parseOnce };

function parseOnce(text: string, country: CountryCode | undefined): Parsed {
  phoneWork.parses++;
  const n = parsePhoneNumberFromString(text, country);
  return n ? { valid: n.isValid(), possible: n.isPossible() } : NOT_A_NUMBER;
}

/**
 * Score for a run of digits and separators, 0 when it is not a phone number. `context` is
 * true when a phone word (tel, call, mobile, Handy, téléphone ...) stands just before it.
 * Each country's number is parsed once and asked both whether it is valid and possible.
 */
export function phoneScore(
  run: string,
  context: boolean,
  judge: Pick<PhoneJudge, 'parse'> = UNBOUNDED,
): number {
  if (DATE_SHAPE.test(run)) return 0;
  const digits = run.replace(/\D/g, '');
  if (digits.length < 7 || digits.length > 15) return 0;
  const groups = run.split(/[\s.\-/()]+/).filter((g) => g !== '').length;
  if (run.startsWith('+') || run.startsWith('(+') || /^00[1-9]/.test(run)) {
    const intl = run.replace(/^\(?00/, '+').replace(/^\(\+/, '+');
    const n = judge.parse(intl, undefined);
    if (n.valid) return context ? 0.95 : 0.9;
    return context && n.possible ? 0.8 : 0;
  }
  if (NANP_SHAPE.test(run) && judge.parse(run, 'US').valid) return context ? 0.9 : 0.8;
  if (digits.startsWith('0') && !digits.startsWith('00')) {
    // Dots alone between groups are dates and versions far more often than phones.
    const phoneLike = groups >= 2 && /[ -]/.test(run);
    // Without a phone word or a phone's layout, the answer is 0 whatever the number.
    if (!context && !phoneLike) return 0;
    let possible = false;
    for (const country of TRUNK_ZERO) {
      const n = judge.parse(run, country);
      if (n.valid) return context ? 0.9 : 0.65;
      possible ||= n.possible;
    }
    return context && possible ? 0.75 : 0;
  }
  if (!context) return 0;
  for (const country of NO_TRUNK) if (judge.parse(run, country).valid) return 0.8;
  return 0;
}
