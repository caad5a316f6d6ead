/**
 * Writes test/data/guardrails/pii/{dev,test}.jsonl: PII in sentences, and benign numbers
 * that look like PII. Phones are libphonenumber-js's example numbers for every country it
 * knows, written the ways people write them (international, national with trunk 0, the
 * "+44 (0)20" notation, E.164, with an extension); cards are numbers built from the card
 * schemes' IIN ranges and lengths (12-19 digits) with a Luhn check digit, in the groupings
 * cards print. Two seeds: dev (looked at while building the detector) and test (not).
 *
 *   npx tsx scripts/guards/pii-cases.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getCountries, getExampleNumber, type CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'data', 'guardrails', 'pii');

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  id: string;
  text: string;
  labels: Array<{ guardrail: 'pii'; category: string }>;
  kind: string;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const digits = (r: () => number, n: number): string =>
  Array.from({ length: n }, () => String(Math.floor(r() * 10))).join('');

function luhnDigit(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let n = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
  }
  return String((10 - (sum % 10)) % 10);
}

/** [scheme, IIN prefix, lengths, grouping] */
const SCHEMES: Array<[string, string[], number[]]> = [
  ['Visa', ['4'], [13, 16, 19]],
  ['Mastercard', ['51', '53', '55', '2221', '2720'], [16]],
  ['Amex', ['34', '37'], [15]],
  ['Discover', ['6011', '65', '644'], [16, 19]],
  ['JCB', ['3528', '3589'], [16, 19]],
  ['Diners', ['300', '36', '38'], [14, 16]],
  ['UnionPay', ['62'], [16, 17, 19]],
  ['Maestro', ['50', '56', '58', '67'], [12, 13, 16, 19]],
  ['Mir', ['2200', '2204'], [16]],
];

function card(r: () => number): { text: string; scheme: string; len: number } {
  const [scheme, prefixes, lengths] = pick(r, SCHEMES);
  const len = pick(r, lengths);
  let prefix = pick(r, prefixes);
  // Maestro 50 must not read as a Visa/Mastercard; keep it 50xx but not 51-55.
  if (scheme === 'Maestro' && prefix === '50') prefix = '5018';
  const body = prefix + digits(r, len - prefix.length - 1);
  const num = body + luhnDigit(body);
  let text = num;
  if (scheme === 'Amex' && r() < 0.6) text = `${num.slice(0, 4)} ${num.slice(4, 10)} ${num.slice(10)}`;
  else if (r() < 0.6) text = (num.match(/.{1,4}/g) ?? []).join(r() < 0.8 ? ' ' : '-');
  return { text, scheme, len };
}

const CARD_FRAMES = [
  (c: string, s: string): string => `My ${s} card number is ${c}, expiry 09/28.`,
  (c: string): string => `Please charge ${c} for the renewal.`,
  (c: string, s: string): string => `Kartennummer (${s}): ${c}`,
  (c: string): string => `Refund went to card ${c} last week.`,
  (c: string): string => `numéro de carte ${c}`,
];

const PHONE_FRAMES = [
  (p: string): string => `Call me on ${p} after six.`,
  (p: string): string => `Tel.: ${p}`,
  (p: string): string => `You can reach our office at ${p} or by email.`,
  (p: string): string => `Mobil: ${p}`,
  (p: string): string => `My number is ${p}.`,
  (p: string): string => `Contact: Jane Roe, ${p}`,
];

/** Countries whose national numbers begin with a trunk 0 that international format drops. */
function phoneText(r: () => number, country: CountryCode): { text: string; style: string } | undefined {
  const n = getExampleNumber(country, examples);
  if (!n) return undefined;
  const national = n.formatNational();
  const intl = n.formatInternational();
  const styles: Array<[string, string]> = [
    ['international', intl],
    ['national', national],
    ['e164', n.number],
  ];
  const rest = intl.slice(`+${n.countryCallingCode} `.length);
  // "(0)" marks a trunk 0 the international form drops; where the 0 stays (Benin, Côte
  // d'Ivoire, Italy) there is no such notation.
  if (national.startsWith('0') && !rest.startsWith('0')) {
    styles.push(['paren-zero', `+${n.countryCallingCode} (0)${rest}`]);
  }
  styles.push(['extension', `${intl} ext. ${digits(r, 3)}`]);
  const [style, text] = pick(r, styles);
  return { text, style };
}

const BENIGN = [
  (r: () => number): string =>
    `Order #${digits(r, 8)} ships on 2026-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)}.`,
  (r: () => number): string =>
    `Version ${Math.floor(r() * 9)}.${Math.floor(r() * 20)}.${Math.floor(r() * 40)} fixed it.`,
  (r: () => number): string => `The invoice total is ${digits(r, 5)}.${digits(r, 2)} EUR.`,
  (r: () => number): string => `Tracking number ${digits(r, 12)} is still in transit.`,
  (r: () => number): string => `ISBN 978-${digits(r, 1)}-${digits(r, 3)}-${digits(r, 5)}-${digits(r, 1)}`,
  (r: () => number): string => `Timestamp ${1_700_000_000 + Math.floor(r() * 1e8)} in the log.`,
  (r: () => number): string => `Build ${digits(r, 16)} failed; see the CI log.`,
  (r: () => number): string => `Meet at 10:${digits(r, 2)} in room ${digits(r, 3)}.`,
  (r: () => number): string =>
    `The population was ${1 + Math.floor(r() * 9)}${digits(r, 2)} ${digits(r, 3)} ${digits(r, 3)} in 2020.`,
  (r: () => number): string =>
    `Account ref ${digits(r, 4)}-${digits(r, 4)}-${digits(r, 4)}-${digits(r, 4)} (internal)`,
];

function build(seed: number, countries: CountryCode[]): Case[] {
  const r = rng(seed);
  const out: Case[] = [];
  for (const country of countries) {
    const p = phoneText(r, country);
    if (!p) continue;
    out.push({
      id: `phone-${country}-${p.style}`,
      text: pick(r, PHONE_FRAMES)(p.text),
      labels: [{ guardrail: 'pii', category: 'PHONE' }],
      kind: `phone:${p.style}`,
    });
  }
  for (let i = 0; i < 150; i++) {
    const c = card(r);
    out.push({
      id: `card-${i}`,
      text: pick(r, CARD_FRAMES)(c.text, c.scheme),
      labels: [{ guardrail: 'pii', category: 'CREDIT_CARD' }],
      kind: `card:${c.scheme}:${c.len}`,
    });
  }
  for (let i = 0; i < 150; i++) {
    const text = pick(r, BENIGN)(r);
    out.push({ id: `benign-${i}`, text, labels: [], kind: 'benign' });
  }
  return out.map((c, i) => ({ ...c, id: `${seed}-${i}-${c.id}` }));
}

function main(): void {
  mkdirSync(OUT, { recursive: true });
  const countries = getCountries();
  // Alternate countries between the splits, so test phones are other countries' plans.
  const dev = countries.filter((_, i) => i % 2 === 0);
  const test = countries.filter((_, i) => i % 2 === 1);
  for (const [name, seed, list] of [
    ['dev', 11, dev],
    ['test', 22, test],
  ] as const) {
    const cases = build(seed, [...list]);
    writeFileSync(join(OUT, `${name}.jsonl`), cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
    console.log(name, cases.length);
  }
}

main();
