/**
 * Secrets detection on long hostile tokens: many near-misses of a keyword inside one run of
 * token characters. Each used to cost a walk or a regex attempt over the rest of the run
 * (quadratic: "sk-" repeated over 64,000 characters took ~3 s); the findings must not change.
 */
import { describe, expect, it } from 'vitest';
import { GITLEAKS, GitleaksRules, lazyLeadMatches } from './gitleaks.ts';
import { prepare } from './normalize.ts';
import { detect } from './secrets.ts';

const rules = new GitleaksRules(GITLEAKS, () => false);
const categories = (text: string): string[] => detect(text).map((f) => f.category);

// A Twilio-shaped key: gitleaks' twilio-api-key rule has the two-letter keyword "sk".
const TWILIO = `SK${'0a1b2c3d4e5f6a7b'.repeat(2)}`;

describe('short keywords repeated in one long token', () => {
  it('finds nothing in "sk-" repeated, and still finds a key after it', () => {
    const run = 'sk-'.repeat(100_000);
    expect(detect(run)).toEqual([]);
    const found = rules.detect(`${run} ${TWILIO}`, 0.85).filter((f) => f.category === 'twilio-api-key');
    expect(found.map((f) => [f.start, f.end])).toEqual([[300_001, 300_001 + TWILIO.length]]);
  });

  it('still opens a window for a short keyword inside a run of token characters', () => {
    expect(rules.detect(`x ${TWILIO} y`, 0.85).map((f) => f.category)).toContain('twilio-api-key');
  });

  it('keeps the guard categories on a long run ending in a real key', () => {
    expect(categories(`${'sk'.repeat(50_000)} ${TWILIO}`)).toEqual(['TWILIO_KEY']);
  });
});

// {"alg":"HS256","typ":"JWT"} . {"sub":"1234567890"} . a signature
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.Xk3pQ9vLm2Rt7Wz4Yb8Nc1Df6Gh0Js5K';
const OPENAI = `sk-proj-${'Ab3dEf7hIj1kLm9n'.repeat(2)}T3BlbkFJ${'Qr5sTu2vWx8yZa4b'.repeat(2)}`;

describe('format rules on many starts inside one long token', () => {
  it('finds no JWT in "eyJ-" repeated, and finds one after it', () => {
    const run = 'eyJ-'.repeat(100_000);
    expect(detect(run)).toEqual([]);
    const found = detect(`${run} ${JWT}`);
    expect(found.map((f) => [f.category, f.start, f.end])).toEqual([['JWT', 400_001, 400_001 + JWT.length]]);
  });

  it('reads a run of starts that ends in a real JWT as one long header, as a scan from the start does', () => {
    // The first start's header runs through every "eyJ-" to the JWT's first '.', and its
    // header does not decode: no finding, and no later start in the run is a match either.
    expect(detect(`${'eyJ-'.repeat(50_000)}${JWT}`)).toEqual([]);
  });

  it('finds no OpenAI key in "sk-" repeated before a marker, and finds one after it', () => {
    const run = `${'sk-'.repeat(100_000)}T3BlbkFJ-short`;
    expect(detect(run)).toEqual([]);
    const found = detect(`${run} ${OPENAI}`).map((f) => [f.category, f.start, f.end]);
    expect(found).toEqual([['OPENAI_KEY', run.length + 1, run.length + 1 + OPENAI.length]]);
  });
});

describe('curl rules on a long line of "curl"', () => {
  const header = '-H "Authorization: Bearer Zx81kq9LmWp3Tr5v"';
  const token = 'Zx81kq9LmWp3Tr5v';
  const curl = (text: string): Array<[number, number]> =>
    rules
      .detect(text, 0.85)
      .filter((f) => f.category === 'curl-auth-header')
      .map((f) => [f.start, f.end]);

  it('finds nothing in "curl " repeated on one line, or on many lines', () => {
    expect(rules.detect('curl '.repeat(100_000), 0.85)).toEqual([]);
    expect(rules.detect('curl \n'.repeat(100_000), 0.85)).toEqual([]);
  });

  it('finds the header at the end of the line, reached from its first "curl"', () => {
    const text = `${'curl '.repeat(100_000)}${header}`;
    const at = text.indexOf(token);
    expect(curl(text)).toEqual([[at, at + token.length]]);
  });

  it('finds a header on the next lines, and not one six lines down', () => {
    const near = `${'curl '.repeat(50_000)}\nx\n${header}`;
    expect(curl(near)).toEqual([[near.indexOf(token), near.indexOf(token) + token.length]]);
    expect(curl(`${'curl '.repeat(50_000)}${'\nx'.repeat(6)}\n${header}`)).toEqual([]);
  });
});

describe('PEM headers repeated before one end marker', () => {
  const body = 'Qk3+z9/LpXw0TmRa5Ue7Yb2Nc8Vd1Of6Gh4Ji3KsZm9vYmFy0123456789abcdefghijklmnopqrstuvwxyz';
  const headers = '-----BEGIN PRIVATE KEY-----\n'.repeat(20_000);

  // gitleaks' private-key rule reads two headers in a row as one key; the guard's own rule does not.
  const pem = (text: string): Array<[number, number]> =>
    detect(text)
      .filter((f) => f.category === 'PRIVATE_KEY')
      .map((f) => [f.start, f.end]);

  it('finds no key in headers without bodies, with or without an end marker', () => {
    expect(pem(headers)).toEqual([]);
    expect(pem(`${headers}-----END PRIVATE KEY-----`)).toEqual([]);
  });

  it('finds the one header whose body is base64, spanning to its end marker', () => {
    const key = `-----BEGIN PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n${body}\\n${body}\n-----END PRIVATE KEY-----`;
    const text = `${headers}${key}`;
    expect(pem(text)).toEqual([[headers.length, text.length]]);
  });
});

describe('nuget passwords on a long line of openings', () => {
  const opening = '<add key="Password" value="';
  const nuget = (text: string): Array<[number, number]> =>
    rules
      .detect(text, 0.85)
      .filter((f) => f.category === 'nuget-config-password')
      .map((f) => [f.start, f.end]);

  it('finds nothing in openings repeated on one line', () => {
    expect(nuget(opening.repeat(20_000))).toEqual([]);
  });

  it('finds the value that closes the line, read from the first opening, as the regex does', () => {
    const text = `${opening.repeat(20_000)}Xk3pQ9vLm2Rt"/>`;
    expect(nuget(text)).toEqual([[opening.length, text.length - 3]]);
  });

  it('finds a later opening whose value is on the next line', () => {
    const next = `<add key="Password"\n value="Xk3pQ9vLm2Rt"/>`;
    const text = `${opening.repeat(20_000)}${next}`;
    const at = text.indexOf('Xk3pQ9vLm2Rt');
    expect(nuget(text)).toEqual([[at, at + 12]]);
  });
});

describe('credential words in many short spans', () => {
  // With the shared preparation the generic rule is tried where credential words start; each
  // word was searched for from its span to the next occurrence anywhere in the text.
  it('finds the same assignments with and without the word positions, after "key=" repeated', () => {
    const value = 'Xk3pQ9vLm2Rt7Wz4';
    const text = `${'key='.repeat(100_000)} db_password: ${value}`;
    const withWords = detect(text, prepare(text));
    expect(withWords).toEqual(detect(text));
    const at = text.indexOf(value);
    expect(withWords.map((f) => [f.category, f.start, f.end])).toEqual([
      ['GENERIC_CREDENTIAL', at, at + value.length],
    ]);
  });
});

// gitleaks' semi-generic rules open with a lazy `[\w.-]{0,50}?` before their keyword.
const YANDEX_KEY = 'AQVNxK3b9Qm2Lr7Tz4Wc8Yh1Jp5Ds0Fg6Nv2BqZe';

describe('lazy-prefix rules on keyword-dense text', () => {
  it('finds the one Yandex key after "yandex " repeated 100,000 times', () => {
    const run = 'yandex '.repeat(100_000);
    const text = `${run}yandex_api_key = "${YANDEX_KEY}"\n`;
    const start = text.indexOf(YANDEX_KEY);
    expect(rules.detect(text, 0.85)).toEqual([
      {
        guardrail: 'secrets',
        category: 'yandex-api-key',
        score: 0.85,
        start,
        end: start + YANDEX_KEY.length,
      },
    ]);
  });

  it('gives the same matches (start, text, groups) as the regex itself', () => {
    // Okta's rule is the one whose lead merges two lazy runs: its text must hold a match too.
    const okta = `okta_token = "00${'a1B2'.repeat(10)}"`;
    const text = `${'yandex'.repeat(3_000)}=${YANDEX_KEY};x${'a'.repeat(70)}yandex: '${YANDEX_KEY}' yandex ${okta}`;
    const lazy = rules.rules.filter((r) => r.lazyLead !== undefined);
    expect(lazy.map((r) => r.id)).toEqual(expect.arrayContaining(['yandex-api-key', 'okta-access-token']));
    for (const rule of lazy) {
      const re = new RegExp(rule.re.source, 'g');
      const want = [...text.matchAll(re)].map((m) => [m.index, ...m]);
      const got = [...lazyLeadMatches(rule.lazyLead as NonNullable<typeof rule.lazyLead>, text)].map((m) => [
        m.index,
        ...m,
      ]);
      expect(got, rule.id).toEqual(want);
      if (rule.id === 'okta-access-token') expect(want).toHaveLength(1);
    }
    const yandex = [
      ...text.matchAll(new RegExp(lazy.find((r) => r.id === 'yandex-api-key')?.re.source ?? '', 'g')),
    ];
    // Its keyword is the first within 20 word characters of the '=' (four keywords back); the
    // match starts 50 characters before it, the longest prefix allowed.
    expect(yandex.map((m) => m.index)).toEqual([6 * 3_000 - 24 - 50, text.indexOf("yandex: '") - 50]);
  });
});
