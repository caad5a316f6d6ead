/**
 * The look-alike guard: two texts that an embedder scores as near-identical but that state
 * different facts must never share an answer. "60 kg" and "6 kg", `SELECT` and `DELETE`,
 * "is" and "isn't", Paris and London differ in one token, which moves a lexical (or even a
 * semantic) embedding very little and the right answer completely.
 *
 * So a hit needs, beyond the DualScore, the same facts on both sides: the same numbers (with
 * their units), the same count of negations, the same operation and direction words, the
 * same quoted strings, code identifiers and operators, and the same named entities (an entity
 * written in lower case on the other side still counts as present). Everything here is pure
 * and cheap (one regex pass per class) because it runs on every candidate hit.
 */

export interface Facts {
  /** Normalised numbers with their unit in order of appearance, then units named alone. */
  numbers: string[];
  /** How many negation markers (English, French, Spanish, German, Italian, Portuguese, Dutch). */
  negations: number;
  /** Operation and direction words (SQL, shell, git verbs; increase/decrease…), stemmed, sorted set. */
  operations: string[];
  /** Quoted or backticked strings, lower-cased, sorted set. */
  quoted: string[];
  /** Code-like tokens (snake_case, camelCase, dotted.names, paths, name2), lower-cased, sorted set. */
  identifiers: string[];
  /** Maths and comparison operators, sorted (a multiset). */
  operators: string[];
  /** Capitalised names and acronyms, lower-cased, sorted set. */
  entities: string[];
  /** Every word, lower-cased: lets an entity match its lower-case spelling on the other side. */
  words: ReadonlySet<string>;
}

export type FactKind = 'number' | 'negation' | 'operation' | 'quoted' | 'identifier' | 'operator' | 'entity';

// prettier-ignore
const UNIT_ALIASES: ReadonlyMap<string, string> = new Map(Object.entries({
  mg: 'mg', milligram: 'mg', milligrams: 'mg', mcg: 'mcg', µg: 'mcg', ug: 'mcg', microgram: 'mcg',
  micrograms: 'mcg', g: 'g', gram: 'g', grams: 'g', kg: 'kg', kgs: 'kg', kilo: 'kg', kilos: 'kg',
  kilogram: 'kg', kilograms: 'kg', lb: 'lb', lbs: 'lb', pound: 'lb', pounds: 'lb', oz: 'oz',
  ounce: 'oz', ounces: 'oz', ml: 'ml', millilitre: 'ml', milliliter: 'ml', millilitres: 'ml',
  milliliters: 'ml', l: 'l', litre: 'l', liter: 'l', litres: 'l', liters: 'l', iu: 'iu', units: 'unit',
  unit: 'unit', tablet: 'tablet', tablets: 'tablet', pill: 'pill', pills: 'pill', dose: 'dose',
  doses: 'dose', mm: 'mm', cm: 'cm', m: 'm', metre: 'm', meter: 'm', metres: 'm', meters: 'm',
  km: 'km', kilometre: 'km', kilometer: 'km', kilometres: 'km', kilometers: 'km', mi: 'mi',
  mile: 'mi', miles: 'mi', ft: 'ft', foot: 'ft', feet: 'ft', inch: 'in', inches: 'in',
  s: 's', sec: 's', secs: 's', second: 's', seconds: 's', ms: 'ms', min: 'min', mins: 'min',
  minute: 'min', minutes: 'min', h: 'h', hr: 'h', hrs: 'h', hour: 'h', hours: 'h', day: 'day',
  days: 'day', week: 'week', weeks: 'week', month: 'month', months: 'month', year: 'year',
  years: 'year', kb: 'kb', mb: 'mb', gb: 'gb', tb: 'tb', usd: 'usd', dollars: 'usd', dollar: 'usd',
  eur: 'eur', euro: 'eur', euros: 'eur', gbp: 'gbp', k: 'k', bn: 'bn', million: 'million',
  billion: 'billion', percent: '%', '%': '%', '°c': '°c', '°f': '°f', c: '°c', f: '°f', x: 'x',
}));

// prettier-ignore
/** Number words, as digits where they have one: "three tips" is "3 tips". "one" is left out (mostly a pronoun). */
const NUMBER_WORDS: ReadonlyMap<string, string> = new Map(Object.entries({
  zero: '0', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9',
  ten: '10', eleven: '11', twelve: '12', thirteen: '13', fourteen: '14', fifteen: '15', sixteen: '16',
  seventeen: '17', eighteen: '18', nineteen: '19', twenty: '20', thirty: '30', forty: '40', fifty: '50',
  sixty: '60', seventy: '70', eighty: '80', ninety: '90', hundred: 'hundred', thousand: 'thousand',
  million: 'million', billion: 'billion', trillion: 'trillion', half: 'half', quarter: 'quarter',
  dozen: 'dozen', double: 'double', twice: 'twice', triple: 'triple',
}));

/** Unit words that mean a unit even without a number ("how many mg", "per week"). */
const STANDALONE_UNIT_EXCLUDED = new Set([
  'in',
  'min',
  'second',
  'unit',
  'units',
  'dose',
  'doses',
  'tablet',
  'tablets',
  'pill',
  'pills',
  'million',
  'billion',
  'bn',
  'percent',
]);

// prettier-ignore
const NEGATIONS = new Set([
  // English
  'not', 'no', 'never', 'none', 'nothing', 'nobody', 'nowhere', 'neither', 'nor', 'without',
  'cannot', 'dont', 'doesnt', 'didnt', 'isnt', 'arent', 'wasnt', 'werent', 'cant', 'couldnt',
  'shouldnt', 'wouldnt', 'wont', 'havent', 'hasnt', 'hadnt', 'mustnt', 'neednt', 'aint',
  // French
  'ne', 'pas', 'jamais', 'sans', 'aucun', 'aucune', 'rien',
  // Spanish, Portuguese, Italian
  'nunca', 'sin', 'jamás', 'ningún', 'ninguno', 'ninguna', 'nada', 'não', 'sem', 'nenhum',
  'nenhuma', 'non', 'mai', 'senza', 'nessun', 'nessuno', 'nessuna', 'niente',
  // German, Dutch
  'nicht', 'kein', 'keine', 'keinen', 'keinem', 'keiner', 'keines', 'nie', 'niemals', 'ohne',
  'nichts', 'niet', 'geen', 'nooit', 'zonder', 'niets',
]);

const SYNONYMS: ReadonlyMap<string, string> = new Map([
  ['maximum', 'max'],
  ['minimum', 'min'],
]);
const SUFFIXES = ['ing', 'ed', 'es', 'e', 's'];

/** Crude stemming, enough to meet "delete", "deletes", "deleting" and "deleted" in one key. */
const stem = (word: string): string => {
  const w = SYNONYMS.get(word) ?? word;
  const suffix = SUFFIXES.find((x) => w.endsWith(x));
  return suffix && w.length - suffix.length >= 3 ? w.slice(0, -suffix.length) : w;
};

// prettier-ignore
const OPERATIONS = new Set([
  // SQL
  'select', 'insert', 'update', 'delete', 'drop', 'truncate', 'alter', 'create', 'grant', 'revoke',
  'merge', 'upsert', 'replace', 'rename',
  // shell, git, packages, services
  'rm', 'rmdir', 'mv', 'cp', 'chmod', 'chown', 'kill', 'sudo', 'shutdown', 'reboot', 'format', 'wipe',
  'push', 'pull', 'reset', 'revert', 'rebase', 'commit', 'checkout', 'install', 'uninstall',
  'enable', 'disable', 'start', 'stop', 'restart', 'encrypt', 'decrypt', 'upload', 'download',
  'import', 'export', 'allow', 'deny', 'block', 'unblock', 'add', 'remove', 'include', 'exclude',
  'accept', 'reject', 'approve', 'refund', 'cancel', 'buy', 'sell', 'borrow', 'lend', 'send', 'receive',
  // direction and comparison
  'increase', 'decrease', 'raise', 'lower', 'higher', 'above', 'below', 'before', 'after', 'more',
  'less', 'fewer', 'most', 'least', 'max', 'min', 'maximum', 'minimum', 'greater', 'smaller',
  'larger', 'bigger', 'longer', 'shorter', 'faster', 'slower', 'first', 'last', 'earliest', 'latest',
  'ascending', 'descending', 'true', 'false', 'inner', 'outer', 'upper',
  'input', 'output', 'positive', 'negative', 'male', 'female', 'adult', 'child', 'children',
  'pregnant', 'infant', 'daily', 'weekly', 'monthly', 'hourly', 'yearly',
].map(stem));

// prettier-ignore
/** Capitalised only because they open a sentence: not names. */
const SENTENCE_STARTERS = new Set([
  'a', 'an', 'the', 'what', 'whats', 'which', 'who', 'whom', 'whose', 'how', 'why', 'when', 'where',
  'is', 'are', 'was', 'were', 'do', 'does', 'did', 'can', 'could', 'would', 'should', 'will', 'shall',
  'may', 'might', 'must', 'have', 'has', 'had', 'i', 'im', 'ive', 'id', 'my', 'we', 'our', 'you',
  'your', 'it', 'its', 'this', 'that', 'these', 'those', 'there', 'here', 'please', 'tell', 'give',
  'show', 'explain', 'describe', 'write', 'list', 'name', 'find', 'help', 'make', 'let', 'lets',
  'compare', 'summarize', 'summarise', 'translate', 'calculate', 'compute', 'convert', 'define',
  'suggest', 'recommend', 'provide', 'generate', 'is', 'if', 'in', 'on', 'at', 'for', 'from', 'to',
  'of', 'with', 'about', 'and', 'or', 'but', 'so', 'then', 'now', 'also', 'hi', 'hello', 'hey',
  'thanks', 'thank', 'ok', 'okay', 'yes', 'no', 'not', 'any', 'some', 'all', 'one', 'quick',
  'quickly', 'briefly', 'in', 'as', 'be', 'get', 'use', 'using', 'should', 'ever', 'roughly',
  'approximately', 'about', 'just', 'again', 'another', 'other', 'each', 'every', 'both',
]);

const NUMBER_RE =
  /(?<![\p{L}\p{N}_.])([$€£])?\s?([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s?(%|°[cf]|[\p{L}µ]+))?(?![\p{N}])/gu;
const WORD_RE = /[\p{L}\p{N}']+/gu;
const QUOTED_RE =
  /"([^"\n]{1,200})"|`([^`\n]{1,200})`|“([^”\n]{1,200})”|‘([^’\n]{1,200})’|«([^»\n]{1,200})»|„([^“\n]{1,200})“|(?<![\p{L}\p{N}])'([^'\n]{1,200})'(?![\p{L}\p{N}])/gu;
// Starts only at a word start: trying every position inside words is what made it slow.
const IDENTIFIER_RE =
  /(?<![\p{L}\p{N}_])(?:[\p{L}\p{N}_]+(?:[./:\\][\p{L}\p{N}_]+)+|[\p{L}\p{N}]*_[\p{L}\p{N}_]*|\p{Ll}+\p{Lu}[\p{L}\p{N}]*|\p{L}+\d[\p{L}\p{N}]*)/gu;
const OPERATOR_RE = /[<>!=]=|[<>=+*^×÷≤≥≠]|(?<=\d\s?)[-/](?=\s?\d)/gu;
const CAPITALISED_RE = /(^|[.!?:;\n]\s*|\s|["'(«“])(\p{Lu}[\p{L}\p{N}'-]*)/gu;

const sortedSet = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

interface Span {
  start: number;
  end: number;
  value: string;
}

const CURRENCY: ReadonlyMap<string, string> = new Map([
  ['$', 'usd'],
  ['€', 'eur'],
  ['£', 'gbp'],
]);

/** Numbers written in digits, with their unit or currency, where they stand in the text. */
function digitNumbers(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(NUMBER_RE)) {
    const value = Number((m[2] as string).replace(/,/g, ''));
    const unit = m[1] ? CURRENCY.get(m[1]) : UNIT_ALIASES.get((m[3] ?? '').toLowerCase());
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      value: unit ? `${value} ${unit}` : String(value),
    });
  }
  return out;
}

function entitiesOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(CAPITALISED_RE)) {
    const word = (m[2] as string).replace(/'s$/, '');
    const lower = word.toLowerCase().replace(/'/g, '');
    const opensSentence = /^$|[.!?:;\n]\s*$/.test(m[1] as string);
    const acronym = word.length >= 2 && word === word.toUpperCase();
    if (lower === 'i') continue; // the pronoun
    if (opensSentence && !acronym && (SENTENCE_STARTERS.has(lower) || NEGATIONS.has(lower))) continue;
    out.push(lower);
  }
  return sortedSet(out);
}

export function extractFacts(input: string): Facts {
  const text = input.replace(/[’‘]/g, (c, i: number, s: string) =>
    // Apostrophes inside words (don’t) become ASCII; quoting marks stay for QUOTED_RE.
    /\p{L}/u.test(s[i - 1] ?? '') && /\p{L}/u.test(s[i + 1] ?? '') ? "'" : c,
  );
  const lower = text.toLowerCase();
  const digits = digitNumbers(text);
  // Numbers in order of appearance ("Python 2 to 3" is not "3 to 2"), then units named alone.
  const numbers: [number, string][] = digits.map((d) => [d.start, d.value]);
  const units = new Set<string>();
  const words = new Set<string>();
  const operations = new Set<string>();
  let negations = 0;
  let span = 0;
  for (const m of lower.matchAll(WORD_RE)) {
    let w = m[0];
    if (w.includes("'")) {
      w = w.replace(/^'+|'+$/g, '');
      // French elides "ne" before a vowel: n'est, n'ai.
      if (w.endsWith("n't") || w.startsWith("n'")) negations++;
      w = w.replace(/'s$/, '').replace(/'/g, '');
    } else if (NEGATIONS.has(w)) negations++;
    if (w === '') continue;
    words.add(w);
    while (span < digits.length && (digits[span] as Span).end <= m.index) span++;
    const inNumber = span < digits.length && (digits[span] as Span).start <= m.index;
    if (inNumber) continue;
    const n = NUMBER_WORDS.get(w);
    if (n !== undefined) numbers.push([m.index, n]);
    const u = UNIT_ALIASES.get(w);
    if (u !== undefined && w.length >= 2 && !STANDALONE_UNIT_EXCLUDED.has(w)) units.add(`unit ${u}`);
    if (w.length >= 2) {
      const st = stem(w);
      if (OPERATIONS.has(st)) operations.add(st);
    }
  }
  const quoted: string[] = [];
  for (const m of text.matchAll(QUOTED_RE)) {
    const q = m.slice(1).find((g) => g !== undefined);
    if (q !== undefined && q.trim() !== '') quoted.push(q.trim().toLowerCase());
  }
  const identifiers: string[] = [];
  for (const m of text.matchAll(IDENTIFIER_RE))
    if (!/^[\d.,:/]+$/.test(m[0])) identifiers.push(m[0].toLowerCase());
  return {
    numbers: [...numbers.sort((a, b) => a[0] - b[0]).map(([, v]) => v), ...[...units].sort()],
    negations,
    operations: [...operations].sort(),
    quoted: sortedSet(quoted),
    identifiers: sortedSet(identifiers),
    operators: [...text.matchAll(OPERATOR_RE)].map((m) => m[0]).sort(),
    entities: entitiesOf(text),
    words,
  };
}

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** An entity of one side must be on the other, as an entity or at least as a word. */
const entitiesMatch = (a: Facts, b: Facts): boolean =>
  a.entities.every((e) => b.words.has(e)) && b.entities.every((e) => a.words.has(e));

/**
 * Past this length a text's facts are not extracted (a few ms per 80k characters): two such
 * questions must be equal outright to share an answer (`questionsConflict`).
 */
export const FACTS_MAX_CHARS = 16_000;

/** Whether a stored question may not answer a new one: different facts, or long and not identical. */
export function questionsConflict(
  query: string,
  facts: Facts | undefined,
  stored: string,
): FactKind | 'text' | undefined {
  if (facts === undefined || stored.length > FACTS_MAX_CHARS) return query === stored ? undefined : 'text';
  return factConflict(facts, extractFacts(stored));
}

/** Facts of a question, or undefined when it is too long to extract them (compared exactly then). */
export const questionFacts = (query: string): Facts | undefined =>
  query.length > FACTS_MAX_CHARS ? undefined : extractFacts(query);

/** The first kind of fact the two texts disagree on; undefined when they state the same facts. */
export function factConflict(a: Facts, b: Facts): FactKind | undefined {
  if (!sameList(a.numbers, b.numbers)) return 'number';
  if (a.negations !== b.negations) return 'negation';
  if (!sameList(a.operations, b.operations)) return 'operation';
  if (!sameList(a.quoted, b.quoted)) return 'quoted';
  if (!sameList(a.identifiers, b.identifiers)) return 'identifier';
  if (!sameList(a.operators, b.operators)) return 'operator';
  if (!entitiesMatch(a, b)) return 'entity';
  return undefined;
}

/**
 * The facts of a whole text as one exact string, for keying (the conversation before the
 * question goes into the partition this way). Entities are exact here: no lower-case leniency.
 */
export function factsSignature(f: Facts): string {
  return JSON.stringify([
    f.numbers,
    f.negations,
    f.operations,
    f.quoted,
    f.identifiers,
    f.operators,
    f.entities,
  ]);
}
