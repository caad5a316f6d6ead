/**
 * A phone number judged by libphonenumber's "min" metadata without a parse: what its
 * `isValid()` checks (possible lengths, leading digits of countries sharing a calling code,
 * the national number pattern and, where kept, the number types), at ~1-2 µs instead of a
 * parse's ~40. Used past a text's parse allowance (phone.ts). National-prefix and
 * calling-code stripping are tried both ways, so it errs towards a phone; capture-group
 * prefix rules (AR, MX ...) and non-geographic codes (+800, +881) are not modelled.
 */
import { getCountryCallingCode, Metadata, type CountryCode } from 'libphonenumber-js/min';
import type { Parsed } from './phone.ts';

/** What the check past the allowance needs of a country's numbering plan. */
interface Plan {
  callingCode: string;
  nationalPrefix: string | undefined;
  /** The international call prefix (00, 011): a number dialled with it is read as international. */
  idd: RegExp;
  lengths: ReadonlySet<number>;
  /** For a country sharing its calling code: the national numbers that are its (Jersey's 1534). */
  leading: RegExp | undefined;
  pattern: RegExp;
  /** Number types (fixed line, mobile ...) where the metadata keeps them: one must match too. */
  types: Array<{ lengths: ReadonlySet<number> | undefined; pattern: RegExp }>;
}
/** The runtime numbering plan: these accessors exist, the published types omit them. */
interface NumberingPlanRuntime {
  possibleLengths(): number[];
  nationalNumberPattern(): string;
  nationalPrefixForParsing(): string | undefined;
  leadingDigits(): string | undefined;
  IDDPrefix(): string;
  type(name: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined;
}
/** The types libphonenumber's getNumberType tries. */
const TYPES = [
  'FIXED_LINE',
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
];
const whole = (pattern: string): RegExp => new RegExp(`^(?:${pattern})$`);

const plans = new Map<string, Plan>();
function plan(country: CountryCode): Plan {
  let p = plans.get(country);
  if (p === undefined) {
    const m = new Metadata();
    m.selectNumberingPlan(country);
    const np = m.numberingPlan as unknown as NumberingPlanRuntime;
    const prefix = np.nationalPrefixForParsing();
    p = {
      callingCode: getCountryCallingCode(country),
      // Only a plain digit prefix is stripped; capture-group rules (AR, MX ...) are not tried.
      nationalPrefix: prefix !== undefined && /^\d+$/.test(prefix) ? prefix : undefined,
      idd: new RegExp(`^(?:${np.IDDPrefix()})`),
      lengths: new Set(np.possibleLengths()),
      leading: np.leadingDigits() ? new RegExp(`^(?:${np.leadingDigits()})`) : undefined,
      pattern: whole(np.nationalNumberPattern()),
      types: TYPES.flatMap((name) => {
        const t = np.type(name);
        if (!t?.pattern()) return [];
        const lengths = t.possibleLengths();
        return [{ lengths: lengths ? new Set(lengths) : undefined, pattern: whole(t.pattern()) }];
      }),
    };
    plans.set(country, p);
  }
  return p;
}

const metadata = new Metadata() as unknown as {
  getCountryCodesForCallingCode(code: string): CountryCode[] | undefined;
};
/** Countries sharing a calling code, the code's main country first (US for 1, GB for 44). */
const countriesFor = (code: string): readonly CountryCode[] =>
  metadata.getCountryCodesForCallingCode(code) ?? [];

/**
 * Valid: a country's lengths, leading digits, national and type patterns all match. Possible:
 * the first country's lengths do (as libphonenumber asks the main country for +1 and +44).
 */
function checkNational(digits: string, countries: readonly CountryCode[]): Parsed {
  let possible = false;
  for (const country of countries) {
    const p = plan(country);
    const candidates = [digits];
    if (p.nationalPrefix !== undefined && digits.startsWith(p.nationalPrefix))
      candidates.push(digits.slice(p.nationalPrefix.length));
    if (digits.startsWith(p.callingCode)) candidates.push(digits.slice(p.callingCode.length));
    for (const n of candidates) {
      if (!p.lengths.has(n.length)) continue;
      possible ||= country === countries[0];
      if (p.leading?.test(n) === false || !p.pattern.test(n)) continue;
      const typed =
        p.types.length === 0 || p.types.some((t) => (t.lengths?.has(n.length) ?? true) && t.pattern.test(n));
      if (typed) return { valid: true, possible: true };
    }
  }
  return { valid: false, possible };
}

/** The metadata's verdict without a parse: possible lengths, then the number patterns. */
export function checkPhone(text: string, country: CountryCode | undefined): Parsed {
  const digits = text.replace(/\D/g, '');
  // A default country's number may belong to another country sharing its calling code
  // (US and Canada, GB and Jersey): libphonenumber's parse accepts those as valid too.
  if (country !== undefined) {
    const idd = plan(country).idd.exec(digits);
    if (idd !== null) return checkInternational(digits.slice(idd[0].length));
    const others = countriesFor(getCountryCallingCode(country)).filter((c) => c !== country);
    return checkNational(digits, [country, ...others]);
  }
  return checkInternational(digits);
}

/** Digits after the +: a calling code of one to three digits, then a national number. */
function checkInternational(digits: string): Parsed {
  let possible = false;
  for (let len = 1; len <= 3; len++) {
    const r = checkNational(digits.slice(len), countriesFor(digits.slice(0, len)));
    if (r.valid) return r;
    possible ||= r.possible;
  }
  return { valid: false, possible };
}
