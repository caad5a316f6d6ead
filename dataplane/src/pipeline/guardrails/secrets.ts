/**
 * Secrets detector, in the manner of gitleaks: one rule per credential format with literal
 * keywords that must be present before the rule's regex runs, an entropy floor, and an
 * allowlist of placeholders. Token rules run only on long runs of token characters (see
 * tokenRuns); PEM keys, URL userinfo and a generic rule — high-entropy values assigned to
 * names like key/secret/token/password, with a lower bar for human passwords — run on the
 * whole text. Regexes are our own; formats follow the vendors' documented token prefixes.
 *
 * Documented example credentials (AWS's ...EXAMPLE keys, Stripe's API-reference key, the
 * jwt.io sample) and self-declared placeholders (<your-key>, ${VAR}, xxxx, ****) are not
 * secrets: they grant nothing, and flagging them blocks people reading vendor docs.
 */
import type { Finding, TextPrep } from './types.ts';
import { dedupeOverlaps, extendLeft, isWordCode } from './spans.ts';
import { trie } from './signals.ts';
import { GITLEAKS, GitleaksRules } from './gitleaks.ts';
import { isPlaceholder, shannonEntropy } from './validators.ts';
import { CREDENTIAL_WORDS } from './word-notes.ts';

interface Rule {
  category: string;
  /** Matches span lines (a JSON key file), so the rule runs over the whole text, not token runs. */
  wholeText?: boolean;
  /** Literal substrings; the regex runs only when one is present (case-sensitive). */
  keywords: string[];
  re: RegExp;
  /** Capture group holding the secret; 0 for the whole match. */
  group?: number;
  score: number;
  /** Minimum Shannon entropy of the secret part, when the format leaves room for fakes. */
  minEntropy?: number;
  check?: (secret: string) => boolean;
  /**
   * The literal after the regex's leading \b, for regexes whose start decides nothing a later
   * start in the same run of word characters and '-' could decide differently: once a start
   * with a word boundary fails, every later one in that run fails too, so the run is skipped.
   * Without it, "eyJ-" repeated made each start scan the rest of the run (quadratic).
   */
  lead?: string;
}

/**
 * Credentials vendors publish in their documentation: Stripe's API-reference key and the
 * jwt.io sample token. (AWS's samples end in EXAMPLE and fail isPlaceholder.)
 */
const DOCUMENTED = new Set([
  'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
]);
const notASecret = (value: string): boolean => isPlaceholder(value) || DOCUMENTED.has(value);

/** Provider formats from gitleaks' rule set (see gitleaks.ts), under the same allow-lists. */
const GITLEAKS_RULES = new GitleaksRules(GITLEAKS, notASecret);
/** Below our own format rules (0.9-0.99): where both match, our category name is kept. */
const GITLEAKS_SCORE = 0.85;

const RULES: Rule[] = [
  {
    category: 'AWS_ACCESS_KEY',
    keywords: ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'A3T'],
    re: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/g,
    score: 0.95,
    minEntropy: 3,
  },
  {
    category: 'AWS_SECRET_KEY',
    keywords: ['ecret', 'ECRET'],
    re: /(?:secret_?access_?key|aws_?secret(?:_?key)?)["']?\s{0,3}[:=]\s{0,3}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    group: 1,
    score: 0.95,
    minEntropy: 4,
  },
  {
    category: 'GCP_API_KEY',
    keywords: ['AIza'],
    re: /\bAIza[\w-]{35}(?![\w-])/g,
    score: 0.95,
    minEntropy: 3.5,
  },
  {
    category: 'GCP_SERVICE_ACCOUNT',
    wholeText: true,
    keywords: ['service_account'],
    re: /"private_key"\s{0,3}:\s{0,3}"(-----BEGIN[A-Z ]{0,20}PRIVATE KEY-----[^"]{64,}?)"/g,
    group: 1,
    score: 0.99,
    check: (s) => shannonEntropy(s) > 4.5,
  },
  {
    category: 'AZURE_CLIENT_SECRET',
    keywords: ['Q~'],
    re: /(?<![\w~.-])([\w~.]{3}\dQ~[\w~.-]{31,34})(?![\w~.-])/g,
    group: 1,
    score: 0.9,
    minEntropy: 3,
  },
  {
    category: 'AZURE_STORAGE_KEY',
    keywords: ['AccountKey='],
    re: /AccountKey=([A-Za-z0-9+/]{86}==)/g,
    group: 1,
    score: 0.95,
    minEntropy: 4,
  },
  {
    category: 'GITHUB_TOKEN',
    keywords: ['gh', 'github_pat_'],
    re: /\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_\w{82})\b/g,
    score: 0.97,
    minEntropy: 3,
  },
  {
    category: 'GITLAB_TOKEN',
    keywords: ['gl', 'GR1348941'],
    re: /\b(?:gl(?:pat|ptt|dt|rt|cbt|ft|imt|oas|soat|ffct|agent)-[\w-]{20,}|GR1348941[\w-]{20})/g,
    score: 0.95,
    minEntropy: 3,
  },
  {
    category: 'SLACK_TOKEN',
    keywords: ['xox', 'xapp-'],
    re: /\b(?:xox[abposer]-\d{8,14}-[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)/g,
    score: 0.95,
    minEntropy: 3,
  },
  {
    category: 'SLACK_WEBHOOK',
    keywords: ['hooks.slack.com'],
    re: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{20,}/g,
    score: 0.95,
  },
  {
    category: 'STRIPE_KEY',
    keywords: ['k_live_', 'k_test_', 'k_prod_'],
    re: /\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{16,99}\b/g,
    score: 0.95,
    minEntropy: 3,
  },
  {
    category: 'ANTHROPIC_KEY',
    keywords: ['sk-ant-'],
    re: /\bsk-ant-(?:api|admin|oat|sid)\d{2}-[\w-]{80,120}/g,
    score: 0.97,
    minEntropy: 3.5,
  },
  {
    category: 'OPENAI_KEY',
    keywords: ['T3BlbkFJ'],
    re: /\bsk-(?:(?:proj|svcacct|admin)-)?[\w-]{16,}T3BlbkFJ[\w-]{16,}/g,
    score: 0.97,
    // A later start leaves fewer places for T3BlbkFJ in the same run, never new ones.
    lead: 'sk-',
  },
  {
    // Keys without the T3BlbkFJ marker still follow "sk-" with a long random body.
    category: 'OPENAI_KEY',
    keywords: ['sk-'],
    re: /\bsk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{40,}/g,
    score: 0.85,
    minEntropy: 4,
  },
  {
    category: 'TWILIO_KEY',
    keywords: ['SK'],
    re: /\bSK[0-9a-fA-F]{32}\b/g,
    score: 0.85,
    minEntropy: 3,
  },
  {
    category: 'SENDGRID_KEY',
    keywords: ['SG.'],
    re: /\bSG\.[\w-]{22}\.[\w-]{43}\b/g,
    score: 0.97,
  },
  {
    category: 'NPM_TOKEN',
    keywords: ['npm_'],
    re: /\bnpm_[A-Za-z0-9]{36}\b/g,
    score: 0.95,
    minEntropy: 3,
  },
  {
    category: 'PYPI_TOKEN',
    keywords: ['pypi-AgEIcHlwaS5vcmc'],
    re: /\bpypi-AgEIcHlwaS5vcmc[\w-]{50,}/g,
    score: 0.97,
  },
  {
    category: 'HUGGINGFACE_TOKEN',
    keywords: ['hf_'],
    re: /\bhf_[A-Za-z]{34}\b/g,
    score: 0.9,
    minEntropy: 3.5,
  },
  {
    category: 'JWT',
    keywords: ['eyJ'],
    re: /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16,}/g,
    score: 0.9,
    check: jwtHeaderValid,
    // Every later start in the run reaches the same first '.', with a shorter header.
    lead: 'eyJ',
  },
  {
    category: 'GENERIC_CREDENTIAL',
    keywords: ['Bearer', 'bearer'],
    re: /\b[Bb]earer\s+([A-Za-z0-9._~+/-]{20,}=*)/g,
    group: 1,
    score: 0.85,
    check: (s) => machineSecretOk(s),
  },
];

/** A JWT counts when its header decodes to JSON naming a real signing algorithm. */
function jwtHeaderValid(token: string): boolean {
  const header = token.slice(0, token.indexOf('.'));
  try {
    const parsed: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return false;
    const alg = (parsed as Record<string, unknown>).alg;
    return typeof alg === 'string' && alg.toLowerCase() !== 'none';
  } catch {
    return false;
  }
}

function charClasses(s: string): number {
  return (
    Number(/[a-z]/.test(s)) + Number(/[A-Z]/.test(s)) + Number(/\d/.test(s)) + Number(/[^A-Za-z0-9]/.test(s))
  );
}

/** Machine-made credentials: long, random-looking, mixing letters and digits. */
function machineSecretOk(value: string): boolean {
  if (value.length < 16 || notASecret(value)) return false;
  if (!/\d/.test(value) || !/[A-Za-z]/.test(value)) return false;
  const h = shannonEntropy(value);
  // Hex alphabets cap entropy near 4 bits, so they get a lower floor than base62/64.
  const hex = /^[0-9a-f]+$/i.test(value);
  return h >= (hex ? 3.2 : 3.5);
}

/** Human-chosen passwords: shorter and less random, so the bar is "not a word or a stand-in". */
function humanSecretOk(value: string): boolean {
  if (value.length < 6 || notASecret(value)) return false;
  if (/^(?:pass(?:word)?|pwd|secret|admin|root|user|guest|changeit|letmein)\d{0,4}$/i.test(value))
    return false;
  if (charClasses(value) < 2) return false;
  return shannonEntropy(value) >= 2.5;
}

/**
 * Names of the form *key*, *secret*, *token*, *password* followed by an assignment. The match
 * starts at the credential word; the rest of the name is recovered by walking left, which is
 * cheaper than letting the regex guess where the name begins.
 */
const ASSIGNMENT =
  /((?:key|secret|token|passw(?:or)?d|passwd|pwd|auth|credential)s?)([\w.-]{0,30}?)["']?[ \t]{0,3}(?:=>|:=|[:=]|[ \t]is[ \t])[ \t]{0,3}(["'`]?)([^\s"'`]{6,300})/gi;
const ASSIGNMENT_LOWER = new RegExp(ASSIGNMENT.source, 'g');
const PASSWORD_NAME = /passw|pwd/i;
/** Name parts that describe a credential rather than hold one. */
const NOT_A_VALUE_NAME =
  /(?:^|[_.-])(?:id|type|name|length|len|size|count|ttl|expir\w*|url|uri|path|file|field|format|hint|policy|prefix|regex|pattern|header|param|env|var|min|max|limit|hash|salt|rotation|version|mode|store)$|^(?:max|min|num)[_-]?tokens?|tokeni[sz]|keyboard|monkey|turkey|hockey|jockey|donkey|keyword|keystroke|keyframe|keyspace|primary[_-]?key|foreign[_-]?key|sort[_-]?key|partition[_-]?key|cache[_-]?key|public[_-]?key|author|idempoten\w*|(?:next|prev|page|pagination|continuation|sync|cursor)\w*token/i;

/**
 * Identifiers that look random but grant nothing: UUIDs and hex digests the length of
 * MD5, SHA-1 and SHA-256. Under a bare "key" or "token" they are ids, hashes or idempotency
 * keys; only a name that says secret, password or API/access key makes one a credential
 * (provider keys that are UUIDs, Heroku's say, have their own keyword rules).
 */
const IDENTIFIER_VALUE =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64})$/i;
const CREDENTIAL_NAME = /secret|passw|pwd|api[_-]?key|access[_-]?key|auth[_-]?token|private/i;
/** Unquoted values that are code: member access, calls, indexing, interpolation. */
const CODE_VALUE =
  /[([{<]|^(?:await|new|this|self|os|process|env|settings|config|request|req|params|props)\b|\.[A-Za-z_]/;

const isNameCode = (c: number): boolean => isWordCode(c) || c === 46 || c === 45;

/** ASSIGNMENT_LOWER tried at one offset (where a credential word starts). */
const ASSIGNMENT_AT = new RegExp(ASSIGNMENT.source, 'y');

/**
 * Where the credential words start inside `words` (spans of lower-cased text that hold
 * one, TextPrep.credentialWords), in order: the only offsets where ASSIGNMENT can match.
 */
function credentialStarts(lower: string, words: Array<[number, number]>): number[] {
  const at: number[] = [];
  for (const [start, end] of words)
    for (const word of CREDENTIAL_WORDS)
      for (let i = indexWithin(lower, word, start, end); i !== -1; i = indexWithin(lower, word, i + 1, end))
        at.push(i);
  return [...new Set(at)].sort((a, b) => a - b);
}

/**
 * Where `word` first lies wholly inside lower[from, end), or -1. Bounded by the span: indexOf
 * read on to the next occurrence anywhere, so a word missing from each of many short spans
 * ("key=" repeated: no "secret") re-read the rest of the text per span, quadratic time.
 */
function indexWithin(lower: string, word: string, from: number, end: number): number {
  const first = word.charCodeAt(0);
  for (let i = from, last = end - word.length; i <= last; i++)
    if (lower.charCodeAt(i) === first && lower.startsWith(word, i)) return i;
  return -1;
}

/**
 * `words`: where the credential words can be (TextPrep.credentialWords), when known. The
 * regex is then tried at those offsets only, in order and never inside the last match, which
 * is every match a scan of the whole text finds: each one begins with such a word.
 */
function genericFindings(text: string, lower: string, out: Finding[], words?: Array<[number, number]>): void {
  if (words && lower.length === text.length) {
    let resume = 0;
    for (const at of credentialStarts(lower, words)) {
      if (at < resume) continue;
      ASSIGNMENT_AT.lastIndex = at;
      const m = ASSIGNMENT_AT.exec(lower);
      if (!m) continue;
      resume = at + m[0].length;
      assignment(text, m, out);
    }
    return;
  }
  // Matched on a lower-cased copy (same offsets) without the `i` flag, which is twice as fast.
  const [haystack, re] = lower.length === text.length ? [lower, ASSIGNMENT_LOWER] : [text, ASSIGNMENT];
  re.lastIndex = 0;
  for (let m = re.exec(haystack); m !== null; m = re.exec(haystack)) assignment(text, m, out);
}

/** Judges one ASSIGNMENT match: a finding for the value when it looks like a credential. */
function assignment(text: string, m: RegExpExecArray, out: Finding[]): void {
  const [whole, word = '', suffix = '', quote = ''] = m;
  const raw = text.slice(m.index + whole.length - (m[4] ?? '').length, m.index + whole.length);
  const nameStart = extendLeft(text, m.index, isNameCode, 40);
  const name = text.slice(nameStart, m.index + word.length + suffix.length);
  // keyHash, tokenType: camelCase parts count like snake_case ones.
  if (NOT_A_VALUE_NAME.test(name.replace(/([a-z0-9])([A-Z])/g, '$1_$2'))) return;
  const valueStart = m.index + whole.length - raw.length;
  let value = raw;
  if (quote === '') {
    value = value.replace(/[,;)}\]]+$/, '');
    if (CODE_VALUE.test(value)) return;
  } else if (text[valueStart + raw.length] !== quote) return;
  if (/^(?:https?|ftp|file):\/\//i.test(value) || value.includes('@')) return;
  if (IDENTIFIER_VALUE.test(value) && !CREDENTIAL_NAME.test(name)) return;
  const ok = PASSWORD_NAME.test(name)
    ? humanSecretOk(value) || machineSecretOk(value)
    : machineSecretOk(value);
  if (!ok) return;
  out.push({
    guardrail: 'secrets',
    category: 'GENERIC_CREDENTIAL',
    score: 0.8,
    start: valueStart,
    end: valueStart + value.length,
  });
}

/**
 * Every token rule matches at least MIN_RUN characters of [A-Za-z0-9_-.~+/=] in a row, so
 * the rules run only on such runs (plus a little context before them for rules that need
 * the variable name). Any run that long covers one of every MIN_RUN-th offsets, so only
 * those are probed: prose and ordinary code pay a fraction of one regex pass.
 */
const MIN_RUN = 20;
const CONTEXT = 80;
const TOKEN_CHARS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/=')
  TOKEN_CHARS[c.charCodeAt(0)] = 1;
const isTokenCode = (c: number): boolean => c < 128 && TOKEN_CHARS[c] === 1;

function tokenRuns(text: string): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (let p = MIN_RUN - 1; p < text.length; p += MIN_RUN) {
    if (!isTokenCode(text.charCodeAt(p))) continue;
    let start = p;
    while (start > 0 && isTokenCode(text.charCodeAt(start - 1))) start--;
    let end = p + 1;
    while (end < text.length && isTokenCode(text.charCodeAt(end))) end++;
    if (end - start >= MIN_RUN) runs.push([start, end]);
    p = end - 1;
  }
  return runs;
}

const isRunCode = (c: number): boolean => isWordCode(c) || c === 45;
const stickies = new Map<RegExp, RegExp>();

/**
 * The matches `rule.re` finds in `text`, tried only at the rule's lead (see Rule.lead): the
 * same matches, in the same order, at most one failed attempt per run.
 */
function* leadMatches(rule: Rule, lead: string, text: string): Generator<RegExpExecArray> {
  let sticky = stickies.get(rule.re);
  if (!sticky) stickies.set(rule.re, (sticky = new RegExp(rule.re.source, 'y')));
  let resume = 0;
  for (let i = text.indexOf(lead); i !== -1; i = text.indexOf(lead, Math.max(i + 1, resume))) {
    if (i > 0 && isWordCode(text.charCodeAt(i - 1))) continue;
    sticky.lastIndex = i;
    const m = sticky.exec(text);
    if (m) {
      resume = i + Math.max(1, m[0].length);
      yield m;
      continue;
    }
    let end = i + lead.length;
    while (end < text.length && isRunCode(text.charCodeAt(end))) end++;
    resume = end;
  }
}

function* allMatches(re: RegExp, text: string): Generator<RegExpExecArray> {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) yield m;
}

function applyRule(
  rule: Rule,
  text: string,
  offset: number,
  keep: (start: number, end: number) => boolean,
  out: Finding[],
): void {
  const matches = rule.lead === undefined ? allMatches(rule.re, text) : leadMatches(rule, rule.lead, text);
  for (const m of matches) {
    const g = rule.group ?? 0;
    const secret = m[g] ?? '';
    if (secret === '') continue;
    const start = offset + m.index + (g === 0 ? 0 : m[0].indexOf(secret));
    const end = start + secret.length;
    if (!keep(start, end) || notASecret(secret)) continue;
    if (rule.minEntropy !== undefined && shannonEntropy(secret) < rule.minEntropy) continue;
    if (rule.check && !rule.check(secret)) continue;
    out.push({ guardrail: 'secrets', category: rule.category, score: rule.score, start, end });
  }
}

/** scheme://user:password@host — the span is the password alone, so redaction keeps the URL. */
const USERINFO = /^([^\s:@/'"]{1,64}):([^\s@/'"]{3,128})@[\w.-]+/;

function urlCredentials(text: string, out: Finding[]): void {
  for (let i = text.indexOf('://'); i !== -1; i = text.indexOf('://', i + 3)) {
    const m = USERINFO.exec(text.slice(i + 3, i + 3 + 260));
    const user = m?.[1];
    const password = m?.[2];
    if (user === undefined || password === undefined || !humanSecretOk(password)) continue;
    const start = i + 3 + user.length + 1;
    out.push({
      guardrail: 'secrets',
      category: 'URL_CREDENTIALS',
      score: 0.9,
      start,
      end: start + password.length,
    });
  }
}

/** Any token-rule keyword; most runs (paths, ids, hashes) fail this one test. */
const ANY_KEYWORD = new RegExp(
  trie([...new Set(RULES.filter((r) => !r.wholeText).flatMap((r) => r.keywords))]),
);

export function detect(text: string, prep?: TextPrep): Finding[] {
  const out: Finding[] = [];
  for (const [runStart, runEnd] of tokenRuns(text)) {
    const from = Math.max(0, runStart - CONTEXT);
    const window = text.slice(from, runEnd);
    if (!ANY_KEYWORD.test(window)) continue;
    // A finding belongs to the run it overlaps, so neighbouring windows never report it twice.
    const inRun = (start: number, end: number): boolean => end > runStart && start < runEnd;
    for (const rule of RULES) {
      if (!rule.wholeText && rule.keywords.some((k) => window.includes(k)))
        applyRule(rule, window, from, inRun, out);
    }
  }
  for (const rule of RULES) {
    if (rule.wholeText && rule.keywords.some((k) => text.includes(k)))
      applyRule(rule, text, 0, () => true, out);
  }
  if (text.includes('PRIVATE KEY')) privateKeyFindings(text, out);
  if (text.includes('://')) urlCredentials(text, out);
  // One lower-cased copy for both passes, and for the other detectors when they share prep.
  const lower = prep ? prep.lower() : text.toLowerCase();
  genericFindings(text, lower, out, prep?.credentialWords());
  // Ours first: where both know a format, the finding keeps our category name.
  out.push(...GITLEAKS_RULES.detect(text, GITLEAKS_SCORE, lower, prep?.keywordWords()));
  return dedupeOverlaps(out);
}

const PEM_HEADER = /-----BEGIN ([A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?)-----/g;

/** PEM private keys count only with a real base64 body, so "-----BEGIN ...\n...\n" is not one. */
function privateKeyFindings(text: string, out: Finding[]): void {
  PEM_HEADER.lastIndex = 0;
  // Headers come in order, so one search for "-----END" serves every header before it; a
  // search per header re-read the rest of the text each time.
  let endMarker = -2;
  for (let m = PEM_HEADER.exec(text); m !== null; m = PEM_HEADER.exec(text)) {
    const bodyStart = m.index + m[0].length;
    if (endMarker !== -1 && endMarker < bodyStart) endMarker = text.indexOf('-----END', bodyStart);
    const bodyEnd = endMarker === -1 ? Math.min(text.length, bodyStart + 8192) : endMarker;
    const base64 = pemBase64(text, bodyStart, bodyEnd);
    if (base64.length < 64 || shannonEntropy(base64) < 4.5) continue;
    let end = bodyEnd;
    if (endMarker !== -1) {
      const close = text.indexOf('-----', endMarker + 8);
      end = close === -1 ? bodyEnd : close + 5;
    }
    out.push({ guardrail: 'secrets', category: 'PRIVATE_KEY', score: 0.99, start: m.index, end });
  }
}

const isLineEnd = (c: number): boolean => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const isSpaceCode = (c: number): boolean =>
  c < 128 ? c === 32 || (c >= 9 && c <= 13) : /\s/.test(String.fromCharCode(c));
const isBase64Code = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 47 && c <= 57) || c === 43 || c === 61;
const isHeaderNameCode = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45;

/**
 * The base64 that begins a PEM body in text[from, to): what removing escaped and real line
 * breaks, white space and "Name: value" header lines (each line start, and `from`, counting as
 * one) leaves in front of its first other character. Read up to that character only: cleaning
 * the whole body first cost the body's length per header, and one "-----END" after many
 * headers made that quadratic.
 */
function pemBase64(text: string, from: number, to: number): string {
  const parts: string[] = [];
  let i = from;
  while (i < to) {
    const c = text.charCodeAt(i);
    if (c === 92 && i + 1 < to && (text.charCodeAt(i + 1) === 110 || text.charCodeAt(i + 1) === 114)) {
      i += 2;
      continue;
    }
    if (isSpaceCode(c)) {
      i++;
      continue;
    }
    if (i === from || isLineEnd(text.charCodeAt(i - 1))) {
      let j = i;
      while (j < to && isHeaderNameCode(text.charCodeAt(j))) j++;
      if (j > i && j < to && text.charCodeAt(j) === 58) {
        while (j < to && !isLineEnd(text.charCodeAt(j))) j++;
        i = j;
        continue;
      }
    }
    if (!isBase64Code(c)) break;
    // Inside a run of base64 characters nothing is removed: no break, space or line start.
    let j = i + 1;
    while (j < to && isBase64Code(text.charCodeAt(j))) j++;
    parts.push(text.slice(i, j));
    i = j;
  }
  return parts.join('');
}
