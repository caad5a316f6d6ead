/**
 * Bad input over real HTTP: every limit in SPEC.md answered with the right status, the SPEC.md
 * error shape (`code` equal to the status) and the offending field named, on the OpenAI
 * routes and on /v1/messages (Anthropic's shape on top). Nothing bad reaches a provider.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { MAX_SCANNED_CHARS } from '../../dataplane/src/pipeline/guardrails/scan.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-bad-input';
const NO_DOCS = ['chat', 'streaming', 'tools', 'vision'];
const WITH_DOCS = [...NO_DOCS, 'documents'];

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';
const PDF_B64 =
  'JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZSAvQ2F0YWxvZz4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK';
const PDF = `data:application/pdf;base64,${PDF_B64}`;

function manifests(url: string): string {
  return [
    deployment({ name: 'chat-model', model: 'chat-model', baseUrl: fakeBase(url), capabilities: NO_DOCS }),
    deployment({ name: 'doc-model', model: 'doc-model', baseUrl: fakeBase(url), capabilities: WITH_DOCS }),
    deployment({
      name: 'claude-doc',
      model: 'claude-doc',
      provider: 'anthropic',
      baseUrl: fakeBase(url, 'anthropic'),
      capabilities: WITH_DOCS,
    }),
    deployment({
      name: 'embed-model',
      model: 'embed-model',
      baseUrl: fakeBase(url),
      capabilities: ['embeddings'],
    }),
    deployment({ name: 'legacy', model: 'legacy', baseUrl: fakeBase(url), capabilities: ['completions'] }),
    tenant('acme'),
    apiKey('acme-key', KEY, 'acme'),
  ].join('');
}

let stack: Stack;
let small: Stack;
const SMALL_LIMIT = 4096;

beforeAll(async () => {
  [stack, small] = await Promise.all([
    startStack(([url]) => manifests(url!)),
    startStack(([url]) => manifests(url!), { bodyLimitBytes: SMALL_LIMIT }),
  ]);
});
afterAll(() => Promise.all([stack?.close(), small?.close()]));
beforeEach(() => [stack, small].forEach((s) => s.fakes[0]!.reset()));

interface ErrorBody {
  type?: string;
  error: { message: string; type: string; code: number; param?: string };
}

async function post(
  path: string,
  body: unknown,
  opts: { on?: Stack; raw?: boolean; contentType?: string; key?: string | null } = {},
): Promise<{ status: number; body: ErrorBody }> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? KEY}`;
  const res = await fetch(`${(opts.on ?? stack).gateway.url}${path}`, {
    method: 'POST',
    headers,
    body: opts.raw ? (body as string) : JSON.stringify(body),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as ErrorBody };
  } catch {
    throw new Error(`${path} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

interface Case {
  name: string;
  body: unknown;
  status?: number;
  type?: string;
  /** The field the error must name, in `param` and in the message. */
  param: string;
  /** Something the message must also say (the reason, not only the field). */
  says?: RegExp;
  raw?: boolean;
  contentType?: string;
}

function expectErrorCase(res: { status: number; body: ErrorBody }, c: Case, anthropic: boolean): void {
  const status = c.status ?? 400;
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  if (anthropic) expect(res.body.type).toBe('error');
  else expect(Object.keys(res.body)).toEqual(['error']);
  const { error } = res.body;
  expect(error.type).toBe(c.type ?? 'invalid_request_error');
  expect(error.code).toBe(status);
  expect(typeof error.message).toBe('string');
  expect(error.param).toBe(c.param);
  expect(error.message).toContain(c.param);
  if (c.says) expect(error.message).toMatch(c.says);
}

const user = (content: unknown) => [{ role: 'user', content }];
const chat = (extra: Record<string, unknown>) => ({ model: 'chat-model', messages: user('hello'), ...extra });
const withImage = (url: string, model = 'chat-model') => ({
  model,
  messages: user([
    { type: 'text', text: 'look' },
    { type: 'image_url', image_url: { url } },
  ]),
});
const IMAGE_FIELD = 'messages[0].content[1].image_url.url';

const chatCases: Case[] = [
  { name: 'temperature 2.5', body: chat({ temperature: 2.5 }), param: 'temperature', says: /<= 2/ },
  { name: 'temperature -1', body: chat({ temperature: -1 }), param: 'temperature', says: />= 0/ },
  {
    name: 'temperature as a string',
    body: chat({ temperature: '0.5' }),
    param: 'temperature',
    says: /number/,
  },
  { name: 'top_p 1.2', body: chat({ top_p: 1.2 }), param: 'top_p', says: /<= 1/ },
  {
    name: 'presence_penalty 3',
    body: chat({ presence_penalty: 3 }),
    param: 'presence_penalty',
    says: /<= 2/,
  },
  {
    name: 'frequency_penalty -2.5',
    body: chat({ frequency_penalty: -2.5 }),
    param: 'frequency_penalty',
    says: />= -2/,
  },
  { name: 'max_tokens 0', body: chat({ max_tokens: 0 }), param: 'max_tokens', says: />= 1/ },
  { name: 'max_tokens 1.5', body: chat({ max_tokens: 1.5 }), param: 'max_tokens', says: /integer/ },
  { name: 'n 0', body: chat({ n: 0 }), param: 'n', says: />= 1/ },
  { name: 'messages missing', body: { model: 'chat-model' }, param: 'messages', says: /required/ },
  { name: 'messages empty', body: chat({ messages: [] }), param: 'messages', says: /fewer than 1/ },
  { name: 'messages not a list', body: chat({ messages: 'hi' }), param: 'messages', says: /array/ },
  { name: 'model missing', body: { messages: user('hi') }, param: 'model', says: /required/ },
  { name: 'model empty', body: chat({ model: '' }), param: 'model' },
  {
    name: "role 'wizard'",
    body: chat({ messages: [{ role: 'wizard', content: 'abracadabra' }] }),
    param: 'messages[0].role',
    // Every allowed role is listed, not only the first alternative the validator tried.
    says: /"system".*"user".*"assistant".*"tool"/,
  },
  {
    name: 'content a number',
    body: chat({ messages: user(42) }),
    param: 'messages[0].content',
    says: /string.*array/,
  },
  {
    name: 'an empty image URL inside a content array',
    body: chat({ messages: user([{ type: 'image_url', image_url: { url: '' } }]) }),
    param: 'messages[0].content[0].image_url.url',
  },
  {
    name: "image detail 'ultra'",
    body: chat({ messages: user([{ type: 'image_url', image_url: { url: PNG, detail: 'ultra' } }]) }),
    param: 'messages[0].content[0].image_url.detail',
    says: /"low".*"high".*"auto"/,
  },
  { name: "stream 'yes'", body: chat({ stream: 'yes' }), param: 'stream', says: /boolean/ },
  {
    name: 'tools with a bad type',
    body: chat({ tools: [{ type: 'retrieval', function: { name: 'lookup' } }] }),
    param: 'tools[0].type',
    says: /function/,
  },
  {
    name: 'a tool without a name',
    body: chat({ tools: [{ type: 'function', function: { description: 'nameless' } }] }),
    param: 'tools[0].function.name',
    says: /required/,
  },
  {
    name: "tool_choice 'sometimes'",
    body: chat({ tool_choice: 'sometimes' }),
    param: 'tool_choice',
    says: /"auto"/,
  },
  {
    name: 'an image/bmp data URL',
    body: withImage('data:image/bmp;base64,Qk0eAAAAAAAAABoAAAAMAAAAAQABAAEAGAAAAP8A'),
    param: IMAGE_FIELD,
    says: /image\/bmp/,
  },
  {
    name: 'a data URL without base64',
    body: withImage('data:image/png,iVBORw0KGgo'),
    param: IMAGE_FIELD,
    says: /base64/,
  },
  {
    name: 'an ftp:// image URL',
    body: withImage('ftp://example.com/cat.png'),
    param: IMAGE_FIELD,
    says: /http/,
  },
  {
    name: 'a PDF to a model without document capability',
    body: withImage(PDF),
    param: IMAGE_FIELD,
    says: /chat-model.*document/,
  },
  {
    name: 'a data URL over 20 MB',
    body: withImage(`data:image/png;base64,${'A'.repeat(28 * 1024 * 1024)}`),
    status: 413,
    type: 'request_too_large',
    param: IMAGE_FIELD,
    says: /exceeds/,
  },
  {
    name: 'invalid JSON',
    body: '{"model": "chat-model", "messages": [',
    raw: true,
    param: 'body',
    says: /JSON/,
  },
  { name: 'an empty body', body: '', raw: true, param: 'body' },
];

describe('POST /v1/chat/completions', () => {
  it.each(chatCases)('$name', async (c) => {
    const res = await post('/v1/chat/completions', c.body, { raw: c.raw });
    expectErrorCase(res, c, false);
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('more text than the guardrails read is a 413 naming messages, refused before any scan', async () => {
    // 9 Mi characters in three messages: under the 32 MiB body limit, over the scan bound.
    const third = 'lorem ipsum '.repeat((3 * 1024 * 1024) / 12);
    const res = await post('/v1/chat/completions', chat({ messages: [third, third, third].flatMap(user) }));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ type: 'request_too_large', code: 413, param: 'messages' });
    expect(res.body.error.message).toContain(String(MAX_SCANNED_CHARS));
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('a body that is not JSON is a 415', async () => {
    const res = await post('/v1/chat/completions', 'model=chat-model', {
      raw: true,
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(415);
    expect(res.body.error).toMatchObject({ type: 'unsupported_media_type', code: 415 });
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('control: valid images and a PDF to a model with document capability are served', async () => {
    const pdf = await post('/v1/chat/completions', withImage(PDF, 'doc-model'));
    expect(pdf.status).toBe(200);
    const image = await post('/v1/chat/completions', withImage(PNG));
    expect(image.status).toBe(200);
    expect(
      (image.body as unknown as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe(fakeAnswer('look'));
    const sent = stack.fakes[0]!.requests.map((r) => JSON.stringify(r.body));
    expect(sent).toHaveLength(2);
    expect(sent[0]).toContain(PDF_B64);
  });

  it('control: the limits themselves are accepted', async () => {
    const res = await post(
      '/v1/chat/completions',
      chat({ temperature: 2, top_p: 0, presence_penalty: -2, frequency_penalty: 2, max_tokens: 1, n: 1 }),
    );
    expect(res.status).toBe(200);
  });
});

describe('POST /v1/embeddings and /v1/completions', () => {
  const cases: (Case & { path: string })[] = [
    {
      path: '/v1/embeddings',
      name: 'input missing',
      body: { model: 'embed-model' },
      param: 'input',
      says: /required/,
    },
    { path: '/v1/embeddings', name: 'model missing', body: { input: 'x' }, param: 'model', says: /required/ },
    {
      path: '/v1/embeddings',
      name: 'input a number',
      body: { model: 'embed-model', input: 7 },
      param: 'input',
      says: /string.*array/,
    },
    {
      path: '/v1/embeddings',
      name: "encoding_format 'hex'",
      body: { model: 'embed-model', input: 'x', encoding_format: 'hex' },
      param: 'encoding_format',
      says: /"float".*"base64"/,
    },
    {
      path: '/v1/embeddings',
      name: 'dimensions 0',
      body: { model: 'embed-model', input: 'x', dimensions: 0 },
      param: 'dimensions',
    },
    {
      path: '/v1/completions',
      name: 'prompt missing',
      body: { model: 'legacy' },
      param: 'prompt',
      says: /required/,
    },
    {
      path: '/v1/completions',
      name: 'temperature 3',
      body: { model: 'legacy', prompt: 'x', temperature: 3 },
      param: 'temperature',
    },
    {
      path: '/v1/completions',
      name: 'frequency_penalty 2.5',
      body: { model: 'legacy', prompt: 'x', frequency_penalty: 2.5 },
      param: 'frequency_penalty',
    },
  ];

  it.each(cases)('$path: $name', async (c) => {
    expectErrorCase(await post(c.path, c.body), c, false);
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });
});

describe('POST /v1/messages (Anthropic shape on top of the SPEC body)', () => {
  const msg = (extra: Record<string, unknown>) => ({
    model: 'chat-model',
    max_tokens: 64,
    // A system prompt shifts the canonical message index: errors must still name the client's field.
    system: 'Be brief.',
    messages: user('hello'),
    ...extra,
  });
  const withBlock = (block: unknown, model = 'chat-model') =>
    msg({ model, messages: user([{ type: 'text', text: 'look' }, block]) });
  const BLOCK_FIELD = 'messages[0].content[1].source';

  const cases: Case[] = [
    {
      name: 'temperature 1.5 (Anthropic allows 0..1)',
      body: msg({ temperature: 1.5 }),
      param: 'temperature',
    },
    { name: 'temperature -1', body: msg({ temperature: -1 }), param: 'temperature' },
    { name: 'top_p 1.2', body: msg({ top_p: 1.2 }), param: 'top_p' },
    { name: 'max_tokens missing', body: { model: 'chat-model', messages: user('x') }, param: 'max_tokens' },
    { name: 'max_tokens 0', body: msg({ max_tokens: 0 }), param: 'max_tokens' },
    { name: 'messages missing', body: { model: 'chat-model', max_tokens: 8 }, param: 'messages' },
    { name: 'messages empty', body: msg({ messages: [] }), param: 'messages' },
    { name: 'model missing', body: { max_tokens: 8, messages: user('x') }, param: 'model' },
    {
      name: "role 'wizard'",
      body: msg({ messages: [{ role: 'wizard', content: 'x' }] }),
      param: 'messages[0].role',
      says: /"user".*"assistant"/,
    },
    {
      name: "role 'system' inside messages",
      body: msg({ messages: [{ role: 'system', content: 'x' }] }),
      param: 'messages[0].role',
    },
    { name: 'content a number', body: msg({ messages: user(42) }), param: 'messages[0].content' },
    { name: "stream 'yes'", body: msg({ stream: 'yes' }), param: 'stream' },
    {
      name: 'a tool whose name is not a string',
      body: msg({ tools: [{ name: 5 }] }),
      param: 'tools[0].name',
    },
    {
      name: 'an image/bmp image block',
      body: withBlock({ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'Qk0=' } }),
      param: BLOCK_FIELD,
      says: /image\/bmp/,
    },
    {
      name: 'an ftp:// image block',
      body: withBlock({ type: 'image', source: { type: 'url', url: 'ftp://example.com/cat.png' } }),
      param: BLOCK_FIELD,
      says: /http/,
    },
    {
      name: 'a PDF document to a model without document capability',
      body: withBlock({
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: PDF_B64 },
      }),
      param: BLOCK_FIELD,
      says: /chat-model.*document/,
    },
    { name: 'invalid JSON', body: '{"model": ', raw: true, param: 'body', says: /JSON/ },
  ];

  it.each(cases)('$name', async (c) => {
    expectErrorCase(await post('/v1/messages', c.body, { raw: c.raw }), c, true);
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('control: a PDF document to a model with document capability is served', async () => {
    const res = await post(
      '/v1/messages',
      withBlock(
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_B64 } },
        'claude-doc',
      ),
    );
    expect(res.status).toBe(200);
    expect((res.body as unknown as { type: string }).type).toBe('message');
    expect(JSON.stringify(stack.fakes[0]!.requests[0]?.body)).toContain(PDF_B64);
  });
});

describe('body size limit', () => {
  const big = 'x'.repeat(SMALL_LIMIT * 2);

  it.each([
    { path: '/v1/chat/completions', body: chat({ messages: user(big) }), anthropic: false },
    {
      path: '/v1/messages',
      body: { model: 'chat-model', max_tokens: 8, messages: user(big) },
      anthropic: true,
    },
    { path: '/v1/embeddings', body: { model: 'embed-model', input: big }, anthropic: false },
  ])('a body over the limit on $path is a 413', async ({ path, body, anthropic }) => {
    const res = await post(path, body, { on: small });
    expect(res.status).toBe(413);
    if (anthropic) expect(res.body.type).toBe('error');
    expect(res.body.error).toMatchObject({ type: 'request_too_large', code: 413 });
    expect(res.body.error.message).toMatch(/body/);
    expect(small.fakes[0]!.requests).toHaveLength(0);
  });

  it('a caller without a key gets a 401 before the body is read', async () => {
    const res = await post('/v1/chat/completions', chat({ messages: user(big) }), { on: small, key: null });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 401 });
  });

  it('control: a body under the limit is served', async () => {
    const res = await post('/v1/chat/completions', chat({ messages: user('small enough') }), { on: small });
    expect(res.status).toBe(200);
    expect(small.fakes[0]!.requests).toHaveLength(1);
  });
});
