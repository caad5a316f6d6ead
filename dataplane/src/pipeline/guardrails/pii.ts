/**
 * PII detector. Three cheap passes find candidates — '@' positions for e-mail, runs of
 * digits and separators for every numeric identifier, and letter-digit shapes for IBAN and
 * national ids — and each candidate is then classified by its shape and validated by its
 * checksum (Luhn, mod-97, SSN rules, ...). Category is the entity kind.
 *
 * What counts: anything valid by format and checksum, including famous test values (a
 * gateway cannot tell a tester's 4111... from a customer's, and redacting it costs
 * nothing). What does not: numbers failing their checksum, private/loopback/link-local
 * addresses (they identify no one outside the network), and ids with weak checksums
 * (9- and 11-digit national numbers) unless a word nearby names them.
 */
import { isIP } from 'node:net';
import { PiiEntities, type PiiEntity } from '@gantry/crds';
import type { Finding } from './types.ts';
import { PhoneJudge } from './phone.ts';
import { dedupeOverlaps, isWordCode } from './spans.ts';
import {
  brCpfValid,
  cardNetwork,
  deTaxIdValid,
  esDniValid,
  ibanValid,
  luhnValid,
  nlBsnValid,
  ssnValid,
  ukNinoValid,
} from './validators.ts';

/** One list for the detector and the policy schema, so a kind cannot be missing from either. */
export const PiiKinds = PiiEntities;
export type PiiKind = PiiEntity;

/** Below every sensible threshold: reported for tuning, never acted on by default. */
const WEAK = 0.3;

function finding(category: PiiKind, score: number, start: number, end: number): Finding {
  return { guardrail: 'pii', category, score, start, end };
}

// ---------------------------------------------------------------- e-mail

const EMAIL_DOMAIN =
  /(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![\w.-]*[\w-])/y;
const isLocalCode = (c: number): boolean =>
  isWordCode(c) || c === 46 || c === 37 || c === 43 || c === 45 || c === 39;

function emails(text: string, out: Finding[]): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && isLocalCode(text.charCodeAt(start - 1))) start--;
    while (start < at && text[start] === '.') start++;
    if (start === at) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    const m = EMAIL_DOMAIN.exec(text);
    if (!m) continue;
    const end = at + 1 + m[0].length;
    // user@host in a URL is a login, and git@host:org/repo is an SSH remote, not a person.
    const token = text.slice(Math.max(0, start - 200), start);
    if (/:\/\/[^\s]*$/.test(token)) continue;
    if (text.slice(start, at) === 'git' && text[end] === ':') continue;
    out.push(finding('EMAIL', 0.9, start, end));
  }
}

// ---------------------------------------------------------------- numeric runs

/**
 * Digits joined by at most three separator characters. The lookbehind keeps runs from
 * starting inside words, versions or paths; the lookahead keeps them from ending inside one.
 */
const NUMERIC_RUN = /(?<![\w.\-/+])(?:\+|\(\+?)?\d(?:[ \-.()/]{0,3}\d){3,22}(?![\w/-]|\.\d)/g;
const IPV4_SHAPE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const SSN_SHAPE = /^\d{3}([- ])\d{2}\1\d{4}$/;
const CPF_SHAPE = /^\d{3}\.\d{3}\.\d{3}-\d{2}$/;
/** Group layouts card networks print: 4-4-4-4(-3), Amex 4-6-5, Diners 4-6-4, or none. */
const CARD_GROUPS = new Set([
  '4,4,4,4',
  '4,4,4,4,3',
  '4,4,4,4,2',
  '4,4,4,4,4',
  '4,6,5',
  '4,6,4',
  '4,4,4,1',
  '4,4,4,3',
  '4,4,5',
]);

/** Groups of four with a shorter last group (4-4-4-2 Diners, 4-4-4-4-1 UnionPay, 4-4-4 Maestro). */
function fourGroups(groups: number[]): boolean {
  const last = groups[groups.length - 1] ?? 0;
  return groups.length >= 3 && last >= 1 && last <= 4 && groups.slice(0, -1).every((g) => g === 4);
}

/** An extension after a phone number belongs to it, so redaction takes it too. */
const PHONE_EXTENSION =
  /^[ \t]{0,2}(?:,|;)?[ \t]{0,2}(?:ext\.?|extension|x|#|;?ext=|app\.?|durchwahl|poste|int\.?)[ \t]{0,2}\d{1,6}\b/i;

const PHONE_WORDS =
  /(?:phone|tel\b|tel\.|tél|telef|telep|call|mobile|cell|whats ?app|sms|text me|fax|reach|ring|dial|handy|ruf|anruf|portable|numéro de|appel|llam|móvil|movil|cellulare|chiama|bel |bellen|mobiel|ligue|celular|contact|hotline)[^\n]{0,30}$/i;
const CARD_WORDS =
  /(?:card|karte|carte|tarjeta|carta|cartão|visa|master ?card|maestro|amex|discover|diners|jcb|union ?pay|rupay|mir\b|credit|debit|pan\b|cc\b)[^\n]{0,30}$/i;
// Whole words only: "tin" ends Martin and Austin, "sofi" starts Sofia, and with the id checked
// before the phone a name beside a phone number turned it into a tax id (review finding).
const SSN_WORDS = /\b(?:ssn|social security|soc\.? sec)[^\n]{0,20}$/i;
const BSN_WORDS = /\b(?:bsn|burgerservicenummer|sofi(?:-?nummer|-?nr|\b))[^\n]{0,20}$/i;
const DE_TAX_WORDS = /\b(?:steuer|idnr|identifikationsnummer|tax id|tin\b)[^\n]{0,30}$/i;
const CPF_WORDS = /\bcpf[^\n]{0,20}$/i;

function before(text: string, index: number, span = 48): string {
  return text.slice(Math.max(0, index - span), index);
}

function ipv4Score(parts: number[]): number {
  if (parts.some((p) => p > 255)) return 0;
  const [a = 0, b = 0] = parts;
  const nonPublic =
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127);
  return nonPublic ? WEAK : 0.85;
}

function classifyRun(text: string, run: string, start: number, out: Finding[], phones: PhoneJudge): void {
  const end = start + run.length;
  const ip = IPV4_SHAPE.exec(run);
  if (ip) {
    const score = ipv4Score(ip.slice(1).map(Number));
    if (score > 0) out.push(finding('IP_ADDRESS', score, start, end));
    return;
  }
  const digits = run.replace(/\D/g, '');
  if (digits.length < 7) return;
  const ctx = before(text, start);

  if (CPF_SHAPE.test(run)) {
    if (brCpfValid(digits)) out.push(finding('BR_CPF', 0.9, start, end));
    return;
  }
  if (SSN_SHAPE.test(run)) {
    if (ssnValid(digits)) out.push(finding('US_SSN', SSN_WORDS.test(ctx) ? 0.95 : 0.85, start, end));
    return;
  }
  if (digits.length >= 12 && digits.length <= 19 && !run.startsWith('+') && !run.startsWith('(')) {
    const groups = run.split(/[ -]/).map((g) => g.length);
    const layoutOk =
      (groups.length === 1 && /^\d+$/.test(run)) || CARD_GROUPS.has(groups.join(',')) || fourGroups(groups);
    if (layoutOk && luhnValid(digits) && cardNetwork(digits)) {
      const named = CARD_WORDS.test(ctx);
      // A bare 12- or 13-digit run is an EAN barcode or an order number as often as an old
      // Maestro or Visa number; those need a card word nearby.
      if (digits.length > 13 || groups.length > 1 || named) {
        out.push(finding('CREDIT_CARD', named || groups.length > 1 ? 0.95 : 0.9, start, end));
        return;
      }
    }
  }
  // A word naming the id and its checksum outweigh a contact word and a phone's shape, and
  // are checked first: the phone judgement is bounded per text and must not decide them.
  const id = /^\d+$/.test(run) ? namedId(ctx, digits) : undefined;
  if (id) {
    out.push(finding(id, 0.9, start, end));
    return;
  }
  const phone = phones.score(run, PHONE_WORDS.test(ctx));
  if (phone > 0) {
    const ext = PHONE_EXTENSION.exec(text.slice(end, end + 24));
    out.push(finding('PHONE', phone, start, end + (ext ? ext[0].length : 0)));
  }
}

/** Bare 9- and 11-digit ids: a one-in-eleven checksum is too weak without a naming word. */
function namedId(ctx: string, digits: string): PiiKind | undefined {
  if (digits.length === 9) {
    if (SSN_WORDS.test(ctx) && ssnValid(digits)) return 'US_SSN';
    if (BSN_WORDS.test(ctx) && nlBsnValid(digits)) return 'NL_BSN';
  } else if (digits.length === 11) {
    if (DE_TAX_WORDS.test(ctx) && deTaxIdValid(digits)) return 'DE_TAX_ID';
    if (CPF_WORDS.test(ctx) && brCpfValid(digits)) return 'BR_CPF';
  }
  return undefined;
}

function numericRuns(text: string, out: Finding[]): void {
  const phones = new PhoneJudge(text.length);
  NUMERIC_RUN.lastIndex = 0;
  for (let m = NUMERIC_RUN.exec(text); m !== null; m = NUMERIC_RUN.exec(text)) {
    let run = m[0];
    // An opening parenthesis that never closes belongs to the prose, not the number.
    if (run.startsWith('(') && !run.includes(')')) run = run.slice(1);
    const start = m.index + (m[0].length - run.length);
    classifyRun(text, run.replace(/[ ().-]+$/, ''), start, out, phones);
  }
}

// ---------------------------------------------------------------- letter-digit ids

const ALNUM_ID =
  /\b(?:([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)|([A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D])|((?:\d{8}|[XYZ]\d{7})-?[A-Z]))\b/g;

function alnumIds(text: string, out: Finding[]): void {
  ALNUM_ID.lastIndex = 0;
  for (let m = ALNUM_ID.exec(text); m !== null; m = ALNUM_ID.exec(text)) {
    const [whole, iban, nino, dni] = m;
    const start = m.index;
    if (iban !== undefined) {
      const compact = iban.replace(/ /g, '');
      if (ibanValid(compact)) out.push(finding('IBAN', 0.95, start, start + whole.length));
    } else if (nino !== undefined) {
      if (ukNinoValid(nino.replace(/ /g, '')))
        out.push(finding('UK_NINO', 0.85, start, start + whole.length));
    } else if (dni !== undefined && esDniValid(dni.replace('-', ''))) {
      out.push(finding('ES_DNI', 0.85, start, start + whole.length));
    }
  }
}

// ---------------------------------------------------------------- IPv6

/** Two colons around at most four hex digits: every IPv6 address has this, little else does. */
/** Sticky: tried only at colons, which indexOf finds faster than the regex's own scan. */
const IPV6_HINT = /:[0-9A-Fa-f]{0,4}:/y;
const isIpv6Code = (c: number): boolean =>
  (c >= 48 && c <= 58) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102) || c === 46;

function ipv6(text: string, out: Finding[]): void {
  let lastEnd = -1;
  // Every hint begins with a colon: trying the sticky regex at each colon, resuming after a
  // hint's end, visits the hints a global exec loop would (matchAll, besides, clones the
  // regex on every call).
  for (let at = text.indexOf(':'); at !== -1;) {
    IPV6_HINT.lastIndex = at;
    const m = IPV6_HINT.exec(text);
    if (m === null) {
      at = text.indexOf(':', at + 1);
      continue;
    }
    const hint = at;
    at = text.indexOf(':', hint + m[0].length);
    if (hint < lastEnd) continue;
    let start = hint;
    while (start > 0 && isIpv6Code(text.charCodeAt(start - 1))) start--;
    let end = hint + m[0].length;
    while (end < text.length && isIpv6Code(text.charCodeAt(end))) end++;
    lastEnd = end;
    // Letters or digits glued to either side: an identifier, a hash, a C++ scope, not an address.
    if (isWordCode(text.charCodeAt(start - 1)) || isWordCode(text.charCodeAt(end))) continue;
    const addr = text.slice(start, end).replace(/\.$/, '');
    if (isIP(addr) !== 6) continue;
    const groups = addr.split(':').filter((g) => g !== '').length;
    // "::1", "fe80::1" and friends: loopback and link-local say nothing about a person.
    const nonPublic = /^(?:::1?$|fe[89ab][0-9a-f]:|f[cd][0-9a-f]{2}:)/i.test(addr) || groups < 3;
    out.push(finding('IP_ADDRESS', nonPublic ? WEAK : 0.85, start, start + addr.length));
  }
}

export function detect(text: string): Finding[] {
  const out: Finding[] = [];
  if (text.includes('@')) emails(text, out);
  numericRuns(text, out);
  alnumIds(text, out);
  ipv6(text, out);
  return dedupeOverlaps(out);
}
