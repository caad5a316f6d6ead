/**
 * Every provider token format gitleaks knows, from its default rule set (MIT; converted by
 * scripts/convert-gitleaks.py into gitleaks-rules.json, source commit recorded there).
 *
 * One pass finds every rule keyword in the lower-cased text (an automaton over all of
 * them, keywords.ts); a rule's regex then runs only in a window around its keyword's occurrences, so a
 * long conversation pays for the keyword pass and a few small windows, not 220 regexes.
 * A keyword shorter than four characters must also touch a run of token characters, so
 * keywords that are common fragments of prose ("sk", "ey", "s.") do not open windows in
 * ordinary sentences.
 *
 * A match counts when its secret (the rule's secret group, else its first non-empty group,
 * else the whole match) passes the rule's entropy floor and neither the rule's allow-list
 * nor gitleaks' global one nor our own placeholder / documented-example check accepts it.
 */
import type { Finding } from './types.ts';
import data from './gitleaks-rules.json' with { type: 'json' };
import { KeywordAutomaton } from './keywords.ts';
import { escapeRegex } from './signals.ts';
import { shannonEntropy } from './validators.ts';

interface RuleData {
  id: string;
  regex: string;
  flags: string;
  keywords: string[];
  entropy?: number;
  secretGroup?: number;
  allowRegexes: string[];
  allowTargets: string[];
  allowStopwords: string[];
}

interface CompiledRule {
  id: string;
  re: RegExp;
  entropy: number;
  secretGroup: number | undefined;
  allow: Array<{ re: RegExp; target: string }>;
  stopwords: string[];
  /** For LINE_TAIL rules: the lead, and the prefix and the whole regex anchored. */
  lineTail?: { lead: string; prefix: RegExp; sticky: RegExp };
  /** For rules that open with a lazy run of one class (see lazyLeadOf). */
  lazyLead?: LazyLead;
}

/**
 * A regex `[C]{0,N}?REST` (gitleaks' semi-generic rules: `[\w.-]{0,50}?` before the
 * keyword), with `cls` one character of C, `max` N and `rest` REST alone. The prefix has no
 * groups, so whether REST matches at a position, and how, does not depend on where the prefix
 * began. Hence the leftmost match from `from` is: the first position k >= from where REST
 * matches, preceded by the longest run of C before k, at most N long, not before `from` (an
 * earlier start would need a REST match before k, or a run through k's own run). The regex
 * alone tried up to N prefix lengths at every offset, and every REST attempt at every keyword
 * they reached: about 2.6 s per MB of "yandexyandex...", where REST alone is tried once per
 * offset.
 */
interface LazyLead {
  cls: RegExp;
  max: number;
  rest: RegExp;
}

/**
 * Rules whose regex is a prefix (tried where its lead occurs), then any text from the end of
 * the prefix to further on its line (and, for curl, up to five lines more), then the rest. If
 * the prefix matched but the whole regex failed, a later prefix ending on that same line, no
 * earlier, fails too: from there the regex reaches the same places or fewer, and what follows
 * them does not depend on where the prefix was. So such starts are not tried again. The regexes
 * alone retried every "curl" (every "<add key=...") of a long line, each one scanning the rest
 * of it: quadratic time in one line of "curl curl curl ...".
 * `rest` is where the line part begins in the regex source; the prefix is what precedes it.
 */
const LINE_TAIL: Record<string, { lead: string; rest: string }> = {
  'curl-auth-header': { lead: 'curl', rest: '(?:.*?|.*?(?:[\\r\\n]{1,2}.*?){1,5})' },
  'curl-auth-user': { lead: 'curl', rest: '(?:.*|.*(?:[\\r\\n]{1,2}.*){1,5})' },
  'nuget-config-password': { lead: '<', rest: '(.{8,})\\"' },
};

/** Where the line holding `from` ends: the first character `.` does not match. */
function lineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) return i;
  }
  return text.length;
}

/** The matches of a LazyLead rule's regex (global) in `text`, as that regex finds them. */
export function* lazyLeadMatches(lead: LazyLead, text: string): Generator<RegExpExecArray> {
  const { cls, max, rest } = lead;
  let from = 0;
  while (from <= text.length) {
    rest.lastIndex = from;
    const r = rest.exec(text);
    if (r === null) return;
    const k = r.index;
    let start = k;
    for (; start > from && k - start < max; start--) {
      cls.lastIndex = start - 1;
      if (!cls.test(text)) break;
    }
    const end = k + r[0].length;
    const m = Object.assign([text.slice(start, end), ...r.slice(1)], {
      index: start,
      input: text,
      groups: undefined,
    }) as RegExpExecArray;
    // As a global regex: resume at the end, one further after an empty match.
    from = end > start ? end : start + 1;
    yield m;
  }
}

/** The matches of `re` (global) in `text`: every start, or per line for a LINE_LEAD rule. */
function* matchesOf(rule: CompiledRule, text: string): Generator<RegExpExecArray> {
  const tail = rule.lineTail;
  if (!tail && rule.lazyLead) {
    yield* lazyLeadMatches(rule.lazyLead, text);
    return;
  }
  if (!tail) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m !== null; m = rule.re.exec(text)) {
      if (m[0] === '') rule.re.lastIndex++;
      yield m;
    }
    return;
  }
  const { lead, prefix, sticky } = tail;
  let resume = 0;
  // The prefix end of the last failed start, and the end of its line.
  let failedAt = -1;
  let failedLineEnd = -1;
  for (let i = text.indexOf(lead); i !== -1; i = text.indexOf(lead, Math.max(i + 1, resume))) {
    prefix.lastIndex = i;
    const p = prefix.exec(text);
    if (!p) continue;
    const after = i + p[0].length;
    if (after >= failedAt && after <= failedLineEnd) continue;
    sticky.lastIndex = i;
    const m = sticky.exec(text);
    if (m) {
      resume = i + Math.max(1, m[0].length);
      yield m;
    } else {
      failedAt = after;
      failedLineEnd = lineEnd(text, after);
    }
  }
}

export interface GitleaksData {
  source: { repo: string; commit: string; path: string; licence: string };
  globalAllowRegexes: string[];
  globalStopwords: string[];
  rules: RuleData[];
}

const BEFORE = 160;
const AFTER = 640;
/** Token characters a short keyword must touch to open a window. */
const MIN_TOUCH_RUN = 8;
const SHORT_KEYWORD = 4;

const isTokenCode = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;

/**
 * Whether the keyword at [start, end) lies in a run of at least MIN_TOUCH_RUN characters
 * counting itself. Both walks stop once the run is long enough: an unbounded walk left made
 * every short keyword in one long token ("sk-sk-sk-...") re-walk the token, quadratic time.
 */
function touchesRun(text: string, start: number, end: number): boolean {
  let a = start;
  while (a > 0 && end - a < MIN_TOUCH_RUN && isTokenCode(text.charCodeAt(a - 1))) a--;
  let b = end;
  while (b < text.length && b - a < MIN_TOUCH_RUN && isTokenCode(text.charCodeAt(b))) b++;
  return b - a >= MIN_TOUCH_RUN;
}

export class GitleaksRules {
  readonly rules: CompiledRule[];
  /** Rule indexes per keyword id of `keywords`. */
  private readonly byKeyword: number[][];
  private readonly keywords: KeywordAutomaton;
  /** One alternation of the keywords that begin with neither a letter nor a digit. */
  private readonly outsideWords: RegExp | undefined;
  private readonly idOf = new Map<string, number>();
  private readonly globalAllow: RegExp[];
  private readonly globalStop: string[];

  constructor(
    d: GitleaksData,
    private readonly notASecret: (value: string) => boolean,
  ) {
    this.rules = d.rules.map((r) => ({
      id: r.id,
      re: new RegExp(r.regex, r.flags.includes('g') ? r.flags : `${r.flags}g`),
      entropy: r.entropy ?? 0,
      secretGroup: r.secretGroup,
      allow: r.allowRegexes.map((x, i) => ({ re: new RegExp(x), target: r.allowTargets[i] ?? 'secret' })),
      stopwords: r.allowStopwords.map((s) => s.toLowerCase()),
      lineTail: lineTailOf(r),
      lazyLead: LINE_TAIL[r.id] === undefined ? lazyLeadOf(r) : undefined,
    }));
    const byKeyword = new Map<string, number[]>();
    d.rules.forEach((r, i) => {
      for (const k of r.keywords) byKeyword.set(k, [...(byKeyword.get(k) ?? []), i]);
    });
    this.keywords = new KeywordAutomaton([...byKeyword.keys()]);
    const outside = [...byKeyword.keys()].filter((k) => !/^[a-z0-9]/.test(k));
    // None begins another (checked below), so at each offset at most one can match: one
    // alternation, tried at every offset, reports each occurrence.
    this.outsideWords = outside.length > 0 ? new RegExp(outside.map(escapeRegex).join('|'), 'g') : undefined;
    [...byKeyword.keys()].forEach((k, id) => this.idOf.set(k, id));
    for (const a of outside)
      for (const b of outside)
        if (a !== b && a.startsWith(b))
          throw new Error(
            `gitleaks keywords ${a} and ${b}: one begins the other, so one regex cannot report both`,
          );
    this.byKeyword = [...byKeyword.values()];
    this.globalAllow = d.globalAllowRegexes.map((x) => new RegExp(x));
    this.globalStop = d.globalStopwords.map((s) => s.toLowerCase());
  }

  /**
   * What keywords.scan(lower) returns, from `words`, the spans of an ASCII text's words
   * where a keyword beginning with a letter or digit can begin (word-notes.ts): each is
   * scanned with a keyword's length of text after it, and the keywords that begin with
   * anything else are found by indexOf.
   */
  private occurrences(lower: string, words: Array<[number, number]>): { found: Float64Array; count: number } {
    const out: number[] = [];
    const longest = this.keywords.longest;
    for (const [start, end] of words)
      this.keywords.scanRange(lower, start, Math.min(lower.length, end + longest), start, end, out);
    const re = this.outsideWords;
    if (re) {
      re.lastIndex = 0;
      for (let m = re.exec(lower); m !== null; m = re.exec(lower)) {
        const id = this.idOf.get(m[0]) as number;
        out.push(m.index * 65536 + m[0].length * 512 + id);
        // Every start: one keyword's occurrence may begin inside another's.
        re.lastIndex = m.index + 1;
      }
    }
    const found = Float64Array.from(out).sort();
    return { found, count: found.length };
  }

  /**
   * Windows per rule, merged, from one pass of the keyword automaton, or, with `words`
   * (see occurrences), from those words alone.
   */
  private windows(
    text: string,
    lower: string,
    words?: Array<[number, number]>,
  ): Map<number, Array<[number, number]>> {
    const haystack = lower.length === text.length ? lower : text;
    const out = new Map<number, Array<[number, number]>>();
    // Every keyword at every offset, by offset and then shortest first: overlapping ones
    // ("ghp_" inside "xghp_...", "sk" in "sk_live") each open their rules' windows.
    const { found, count } =
      words && haystack === lower ? this.occurrences(lower, words) : this.keywords.scan(haystack);
    for (let k = 0; k < count; k++) {
      const x = found[k] as number;
      const start = Math.floor(x / 65536);
      const id = x % 512;
      const end = start + (this.keywords.lengths[id] as number);
      if (end - start < SHORT_KEYWORD && !touchesRun(text, start, end)) continue;
      this.open(this.byKeyword[id] as number[], start, end, text.length, out);
    }
    return out;
  }

  private open(
    rules: number[],
    start: number,
    end: number,
    length: number,
    out: Map<number, Array<[number, number]>>,
  ): void {
    {
      const from = Math.max(0, start - BEFORE);
      const to = Math.min(length, end + AFTER);
      for (const r of rules) {
        const list = out.get(r) ?? [];
        const last = list[list.length - 1];
        if (last && from <= last[1]) last[1] = Math.max(last[1], to);
        else list.push([from, to]);
        out.set(r, list);
      }
    }
  }

  private allowed(rule: CompiledRule, secret: string, match: string): boolean {
    if (this.notASecret(secret)) return true;
    const lower = secret.toLowerCase();
    if (rule.stopwords.some((w) => lower.includes(w)) || this.globalStop.some((w) => lower.includes(w)))
      return true;
    if (rule.allow.some((a) => a.re.test(a.target === 'match' || a.target === 'line' ? match : secret)))
      return true;
    return this.globalAllow.some((re) => re.test(secret));
  }

  /**
   * `lower`: text.toLowerCase(), when the caller has it already; `words`: where keywords
   * can begin, when known (TextPrep.keywordWords).
   */
  detect(
    text: string,
    score: number,
    lower = text.toLowerCase(),
    words?: Array<[number, number]>,
  ): Finding[] {
    const out: Finding[] = [];
    for (const [index, spans] of this.windows(text, lower, words)) {
      const rule = this.rules[index];
      if (!rule) continue;
      for (const [from, to] of spans) {
        const window = text.slice(from, to);
        for (const m of matchesOf(rule, window)) {
          if (m[0] === '') continue;
          const secret = secretOf(m, rule.secretGroup);
          if (secret === '' || shannonEntropy(secret) < rule.entropy) continue;
          if (this.allowed(rule, secret, m[0])) continue;
          const start = from + m.index + Math.max(0, m[0].indexOf(secret));
          out.push({ guardrail: 'secrets', category: rule.id, score, start, end: start + secret.length });
        }
      }
    }
    return out;
  }
}

function lineTailOf(r: RuleData): CompiledRule['lineTail'] {
  const tail = LINE_TAIL[r.id];
  if (tail === undefined) return undefined;
  // The skip is sound only for this shape; a rules update that changes it must be looked at.
  const at = r.regex.indexOf(tail.rest);
  if (at <= 0 || r.flags.replace('g', '') !== '')
    throw new Error(`gitleaks rule ${r.id} no longer has a prefix and then ${tail.rest}`);
  return {
    lead: tail.lead,
    prefix: new RegExp(r.regex.slice(0, at), 'y'),
    sticky: new RegExp(r.regex, 'y'),
  };
}

/** `[class]{0,N}?` at the start of a regex source. */
const LAZY_CLASS = /^(\[(?:\\.|[^\]\\])*\])\{0,(\d+)\}\?/;

/**
 * The LazyLead of a rule whose regex opens with a lazy class run, also when a second run of
 * the same class opens the group after it (`[C]{0,50}?(?:[C]{0,50}?KW...)`, some gitleaks
 * rules): two lazy runs try the keyword positions in the same order as one run of N + M.
 */
function lazyLeadOf(r: RuleData): LazyLead | undefined {
  const first = LAZY_CLASS.exec(r.regex);
  if (!first) return undefined;
  const [prefix, cls, n] = first as unknown as [string, string, string];
  let max = Number(n);
  let rest = r.regex.slice(prefix.length);
  const inner = rest.startsWith('(?:') ? LAZY_CLASS.exec(rest.slice(3)) : null;
  if (inner && inner[1] === cls) {
    max += Number(inner[2]);
    rest = `(?:${rest.slice(3 + inner[0].length)}`;
  }
  const flags = r.flags.replace('g', '');
  return { cls: new RegExp(cls, `${flags}y`), max, rest: new RegExp(rest, `${flags}g`) };
}

function secretOf(m: RegExpExecArray, group: number | undefined): string {
  if (group !== undefined) return m[group] ?? '';
  for (let g = 1; g < m.length; g++) if (m[g]) return m[g] as string;
  return m[0];
}

export const GITLEAKS: GitleaksData = data as GitleaksData;
