/**
 * Generated bad requests for the fuzz test: a seeded PRNG, so a failing case is reproduced
 * from its seed and number. Each case is a plain HTTP request (sent with undici) or raw
 * bytes (for what no HTTP client will send: broken request lines, conflicting lengths).
 */

/** mulberry32: small, fast, good enough to spread cases; the same seed gives the same run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type FuzzCase =
  | {
      kind: 'http';
      what: string;
      method: string;
      path: string;
      headers: Record<string, string>;
      body?: string;
    }
  | { kind: 'raw'; what: string; bytes: string };

export const MODELS = {
  chat: 'fuzz-chat',
  messages: 'fuzz-claude',
  completions: 'fuzz-legacy',
  embeddings: 'fuzz-embed',
} as const;

type Endpoint = keyof typeof MODELS;

export const PATHS: Record<Endpoint, string> = {
  chat: '/v1/chat/completions',
  messages: '/v1/messages',
  completions: '/v1/completions',
  embeddings: '/v1/embeddings',
};

const TOOL = {
  type: 'function',
  function: {
    name: 'lookup',
    description: 'look something up',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
};

/** A valid body per endpoint: the fuzzer breaks one thing at a time in a copy. */
export function validBody(endpoint: Endpoint): Record<string, unknown> {
  // A deep copy: the fuzzer mutates it, and TOOL is shared.
  return structuredClone(validBodyShared(endpoint));
}

function validBodyShared(endpoint: Endpoint): Record<string, unknown> {
  switch (endpoint) {
    case 'chat':
      return {
        model: MODELS.chat,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'result' },
          { role: 'user', content: 'and now?' },
        ],
        temperature: 0.5,
        top_p: 1,
        max_tokens: 16,
        n: 1,
        stream: false,
        stop: ['\n\n'],
        presence_penalty: 0,
        frequency_penalty: 0,
        tools: [TOOL],
        tool_choice: 'auto',
        response_format: { type: 'text' },
        seed: 1,
        user: 'fuzzer',
        logit_bias: { '50256': -100 },
        metadata: { run: 'fuzz' },
      };
    case 'messages':
      return {
        model: MODELS.messages,
        max_tokens: 16,
        system: 'be brief',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
          { role: 'assistant', content: 'hi' },
          { role: 'user', content: 'and now?' },
        ],
        temperature: 0.5,
        top_p: 1,
        top_k: 5,
        stop_sequences: ['\n\n'],
        stream: false,
        tools: [{ name: 'lookup', description: 'look', input_schema: TOOL.function.parameters }],
        metadata: { user_id: 'fuzzer' },
      };
    case 'completions':
      return {
        model: MODELS.completions,
        prompt: 'Once upon a time',
        max_tokens: 16,
        temperature: 0.5,
        top_p: 1,
        n: 1,
        stop: '\n',
        echo: false,
        stream: false,
        user: 'fuzzer',
      };
    case 'embeddings':
      return {
        model: MODELS.embeddings,
        input: ['hello', 'world'],
        encoding_format: 'float',
        user: 'fuzzer',
      };
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside a JSON value, e.g. ['messages', 1, 'content', 0, 'text']. */
function paths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  if (prefix.length > 0) out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

function setAt(
  root: Record<string, unknown>,
  path: (string | number)[],
  value: unknown,
  remove = false,
): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (remove) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else node[last] = value;
}

function nested(depth: number, leaf: Json, asArray: boolean): Json {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

const pick = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
const int = (rnd: () => number, lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

/** Unicode that breaks naive code: lone surrogates, controls, RTL marks, emoji, NUL, combining marks. */
function garbage(rnd: () => number, length: number): string {
  const pieces = [
    '\u0000',
    '\ud800',
    '\udfff',
    '\u202e',
    '\u200b',
    '\ufeff',
    '🤖',
    'é',
    '\u0301',
    '\\',
    '"',
    '\n',
    '𝕏',
    '\u2028',
    '%',
    '{{',
  ];
  let s = '';
  while (s.length < length) s += rnd() < 0.5 ? pick(rnd, pieces) : String.fromCharCode(int(rnd, 0, 0xffff));
  return s;
}

/** Values of the wrong type or an absurd size, for any field. Nesting stays below 60 levels. */
function badValue(rnd: () => number): { value: Json; what: string } {
  const choices: (() => { value: Json; what: string })[] = [
    () => ({ value: null, what: 'null' }),
    () => ({ value: true, what: 'true' }),
    () => ({ value: 0, what: '0' }),
    () => ({ value: -1, what: '-1' }),
    () => ({ value: -1e308, what: '-1e308' }),
    () => ({ value: 1e308, what: '1e308' }),
    () => ({ value: 1e20, what: '1e20' }),
    () => ({ value: 2 ** 53 + 1, what: '2^53+1' }),
    () => ({ value: 0.5, what: '0.5' }),
    () => ({
      value: pick(rnd, ['NaN', 'Infinity', '-Infinity', '-0', '1e999', '0x10', '']),
      what: 'NaN-ish string',
    }),
    () => ({ value: garbage(rnd, int(rnd, 1, 64)), what: 'unicode garbage' }),
    () => ({ value: 'x'.repeat(int(rnd, 10_000, 200_000)), what: 'huge string' }),
    () => ({ value: [], what: '[]' }),
    () => ({ value: {}, what: '{}' }),
    () => ({ value: Array.from({ length: int(rnd, 100, 2000) }, (_, i) => i), what: 'long array' }),
    () => ({ value: nested(int(rnd, 5, 50), 'x', rnd() < 0.5), what: 'nesting' }),
    () => ({
      // Parsed, not written as a literal: a literal `__proto__` would set the prototype, not a key.
      value: JSON.parse('{"__proto__":{"admin":true},"constructor":{"prototype":1}}') as Json,
      what: 'prototype keys',
    }),
    () => ({ value: [null, 1, 'a', {}, []], what: 'mixed array' }),
  ];
  return pick(rnd, choices)();
}

function jsonHeaders(endpoint: Endpoint, key: string): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  if (endpoint === 'messages') h['anthropic-version'] = '2023-06-01';
  return h;
}

/** Wrong type or size at one field (or a field removed, or one added) of a valid body. */
function fieldCase(rnd: () => number, key: string): FuzzCase {
  const endpoint = pick(rnd, Object.keys(MODELS) as Endpoint[]);
  const body = validBody(endpoint);
  const at = pick(rnd, paths(body));
  let what: string;
  const r = rnd();
  if (r < 0.15) {
    setAt(body, at, undefined, true);
    what = `remove ${at.join('.')}`;
  } else if (r < 0.25) {
    const extra = badValue(rnd);
    setAt(body, [...at.slice(0, -1), `x_${garbage(rnd, 3)}`], extra.value);
    what = `extra field beside ${at.join('.')} = ${extra.what}`;
  } else {
    const bad = badValue(rnd);
    setAt(body, at, bad.value);
    what = `${at.join('.')} = ${bad.what}`;
  }
  // Some cases stream: the error must come before any event, or as a proper error event.
  if (rnd() < 0.15 && endpoint !== 'embeddings') body.stream = true;
  return {
    kind: 'http',
    what: `${endpoint}: ${what}`,
    method: 'POST',
    path: PATHS[endpoint],
    headers: jsonHeaders(endpoint, key),
    body: JSON.stringify(body),
  };
}

/** Text that is not JSON, or JSON that is not an object. */
function brokenJsonCase(rnd: () => number, key: string): FuzzCase {
  const endpoint = pick(rnd, Object.keys(MODELS) as Endpoint[]);
  const good = JSON.stringify(validBody(endpoint));
  const variants: (() => [string, string])[] = [
    () => {
      const cut = int(rnd, 0, good.length - 1);
      return [`truncated at ${cut}`, good.slice(0, cut)];
    },
    () => ['trailing garbage', `${good}}{`],
    () => ['single quotes', good.replace(/"/g, "'")],
    () => [
      'NaN literal',
      good
        .replace(/"temperature":[^,]+/, '"temperature":NaN')
        .replace(/"max_tokens":\d+/, '"max_tokens":NaN'),
    ],
    () => ['comment', `/* hi */${good}`],
    () => ['BOM', `\ufeff${good}`],
    () => ['random bytes', garbage(rnd, int(rnd, 1, 300))],
    () => ['array body', `[${good}]`],
    () => ['string body', JSON.stringify(good)],
    () => ['number body', '12345678901234567890'],
    () => ['null body', 'null'],
    () => ['empty body', ''],
    () => ['whitespace body', ' \n\t '],
    () => ['unbalanced nesting', `${'['.repeat(int(rnd, 1, 50))}1`],
    () => ['lone surrogate escape', good.replace('hello', '\\ud800\\u0000')],
    () => ['bad escape', good.replace('hello', '\\x41\\q')],
    () => ['duplicate keys', good.replace('{', '{"model":1,')],
    () => ['huge exponent', good.replace(/"max_tokens":\d+/, '"max_tokens":1e999999')],
  ];
  const [what, body] = pick(rnd, variants)();
  return {
    kind: 'http',
    what: `${endpoint}: broken JSON (${what})`,
    method: 'POST',
    path: PATHS[endpoint],
    headers: jsonHeaders(endpoint, key),
    body,
  };
}

function contentTypeCase(rnd: () => number, key: string): FuzzCase {
  const endpoint = pick(rnd, Object.keys(MODELS) as Endpoint[]);
  const type = pick(rnd, [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/jsonx',
    'application/octet-stream',
    'application/json; charset=utf-16',
    'json',
    '',
    ';;;',
    'application/json, text/plain',
    garbage(rnd, 8).replace(/[^\x20-\x7e]/g, 'x'),
  ]);
  const headers = jsonHeaders(endpoint, key);
  if (type === '') delete headers['content-type'];
  else headers['content-type'] = type;
  return {
    kind: 'http',
    what: `${endpoint}: content-type ${JSON.stringify(type)}`,
    method: 'POST',
    path: PATHS[endpoint],
    headers,
    body: JSON.stringify(validBody(endpoint)),
  };
}

function headerCase(rnd: () => number, key: string): FuzzCase {
  const endpoint = pick(rnd, Object.keys(MODELS) as Endpoint[]);
  const headers = jsonHeaders(endpoint, key);
  const variants: (() => string)[] = [
    () => {
      delete headers.authorization;
      return 'no authorization';
    },
    () => ((headers.authorization = 'Bearer'), 'empty bearer'),
    () => ((headers.authorization = `Basic ${Buffer.from('a:b').toString('base64')}`), 'basic auth'),
    () => ((headers.authorization = `Bearer ${'k'.repeat(int(rnd, 1000, 7000))}`), 'very long key'),
    () => ((headers.authorization = `Bearer ${key} ${key}`), 'two keys'),
    () => ((headers['x-api-key'] = 'sk-not-a-key'), 'wrong x-api-key next to a good bearer'),
    () => (
      (headers['x-gantry-guard'] = pick(rnd, ['bogus', ',,,', 'none,pii', 'ALL', 'pii;secrets'])),
      'guard header'
    ),
    () => ((headers['x-gantry-route'] = pick(rnd, ['maybe', '', '0'])), 'route header'),
    () => ((headers['x-gantry-cache'] = pick(rnd, ['maybe', 'off,on', ''])), 'cache header'),
    () => ((headers['x-request-id'] = 'r'.repeat(int(rnd, 200, 4000))), 'long request id'),
    () => (
      (headers['content-encoding'] = pick(rnd, ['gzip', 'br', 'identity, gzip', 'bogus'])),
      'content-encoding'
    ),
    () => ((headers['anthropic-version'] = 'not-a-date'), 'anthropic-version'),
  ];
  const what = pick(rnd, variants)();
  return {
    kind: 'http',
    what: `${endpoint}: ${what}`,
    method: 'POST',
    path: PATHS[endpoint],
    headers,
    body: JSON.stringify(validBody(endpoint)),
  };
}

function pathCase(rnd: () => number, key: string): FuzzCase {
  const method = pick(rnd, [
    'GET',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'OPTIONS',
    'HEAD',
    'PROPFIND',
    'M-SEARCH',
  ]);
  const path = pick(rnd, [
    '/v1/chat/completions/',
    '/v1//chat/completions',
    '/V1/CHAT/COMPLETIONS',
    '/v1/chat/completions%00',
    '/v1/chat/completions;x=1',
    '/v1/chat/%2e%2e/completions',
    '/v1/models/../../ui',
    '/%zz',
    '/v1/%',
    '/v1/models?%zz=1',
    '/UI',
    '//ui',
    '/ui/',
    '/%75i',
    '/%2575i',
    '/login;x',
    `/v1/${garbage(rnd, 10)
      .split('')
      .map((c) => encodeURIComponent(c.replace(/[\ud800-\udfff]/g, 'x')))
      .join('')}`,
    `/${'a/'.repeat(int(rnd, 10, 2000))}`,
    '/v1/models',
    '/v1/embeddings',
    '/v1/messages/count_tokens',
    '/api/analytics/dashboard',
    '/api/analytics/usage/logs?start=yesterday&limit=-5',
    '/metrics',
    '/readyz',
  ]);
  const withBody = method !== 'GET' && method !== 'HEAD' && rnd() < 0.5;
  return {
    kind: 'http',
    what: `${method} ${path.slice(0, 80)}`,
    method,
    path,
    headers: {
      authorization: `Bearer ${key}`,
      ...(withBody && { 'content-type': 'application/json' }),
    },
    ...(withBody && { body: '{"model":"x"}' }),
  };
}

/** Bytes no HTTP client would send. Each is complete, so none waits for a timeout. */
function rawCase(rnd: () => number, key: string): FuzzCase {
  const body = JSON.stringify(validBody('chat'));
  const variants: [string, string][] = [
    ['method with a space', 'GE T /v1/models HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['bad method token', 'FOO\u0001 /v1/models HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['no path', 'GET HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['bad version', 'GET /v1/models HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['header without colon', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
    ['space before colon', 'GET /v1/models HTTP/1.1\r\nHost : x\r\n\r\n'],
    [
      'content-length and chunked',
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    ],
    [
      'two content-lengths',
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    ],
    [
      'negative content-length',
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n',
    ],
    [
      'bad chunk size',
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ],
    ['header too large', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`],
    ['NUL in path', 'GET /v1/mod\u0000els HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['raw dot segments to ui', 'GET /v1/../UI/ HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['absolute-form target', 'GET http://evil.example/ui HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['TRACE', 'TRACE /v1/models HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['HTTP/2 preface', 'PRI * HTTP/2.0\r\nHost: x\r\n\r\nSM\r\n\r\n'],
    ['HTTP/0.9 style', 'GET /v1/models\r\nHost: x\r\n\r\n'],
  ];
  const [what, bytes] = pick(rnd, variants);
  // Close after one answer, so the reader knows where it ends.
  return {
    kind: 'raw',
    what: `raw: ${what}`,
    bytes: bytes.replace('Host: x\r\n', 'Host: x\r\nConnection: close\r\n'),
  };
}

export function generateCases(seed: number, count: number, key: string): FuzzCase[] {
  const rnd = prng(seed);
  const kinds: [number, (rnd: () => number, key: string) => FuzzCase][] = [
    [0.45, fieldCase],
    [0.15, brokenJsonCase],
    [0.1, contentTypeCase],
    [0.12, headerCase],
    [0.12, pathCase],
    [0.06, rawCase],
  ];
  return Array.from({ length: count }, () => {
    let r = rnd();
    for (const [weight, make] of kinds) {
      if (r < weight) return make(rnd, key);
      r -= weight;
    }
    return fieldCase(rnd, key);
  });
}
