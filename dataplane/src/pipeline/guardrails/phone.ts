/**
 * Phone-number judgement for a numeric run found by the PII scanner. Numbering plans are
 * per country and change, so validity comes from libphonenumber-js (Google's metadata,
 * "min" build: lengths and leading digits, no carrier data). The rules here only decide how
 * much format and context evidence a run needs before it is asked.
 */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/min';

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

function valid(text: string, country: CountryCode | undefined, loose: boolean): boolean {
  const parsed = parsePhoneNumberFromString(text, country);
  if (!parsed) return false;
  return loose ? parsed.isPossible() : parsed.isValid();
}

/**
 * Score for a run of digits and separators, 0 when it is not a phone number. `context` is
 * true when a phone word (tel, call, mobile, Handy, téléphone ...) stands just before it.
 */
export function phoneScore(run: string, context: boolean): number {
  if (DATE_SHAPE.test(run)) return 0;
  const digits = run.replace(/\D/g, '');
  if (digits.length < 7 || digits.length > 15) return 0;
  const groups = run.split(/[\s.\-/()]+/).filter((g) => g !== '').length;
  if (run.startsWith('+') || run.startsWith('(+') || /^00[1-9]/.test(run)) {
    const intl = run.replace(/^\(?00/, '+').replace(/^\(\+/, '+');
    if (valid(intl, undefined, false)) return context ? 0.95 : 0.9;
    return context && valid(intl, undefined, true) ? 0.8 : 0;
  }
  if (NANP_SHAPE.test(run) && valid(run, 'US', false)) return context ? 0.9 : 0.8;
  if (digits.startsWith('0') && !digits.startsWith('00')) {
    // Dots alone between groups are dates and versions far more often than phones.
    const phoneLike = groups >= 2 && /[ -]/.test(run);
    for (const country of TRUNK_ZERO) {
      if (valid(run, country, false)) return context ? 0.9 : phoneLike ? 0.65 : 0;
    }
    if (context) for (const country of TRUNK_ZERO) if (valid(run, country, true)) return 0.75;
    return 0;
  }
  if (!context) return 0;
  for (const country of NO_TRUNK) if (valid(run, country, false)) return 0.8;
  return 0;
}
