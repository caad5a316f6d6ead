import { Ajv, type ErrorObject } from 'ajv';
import { errorCodes } from 'fastify';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import { ClientAbortError } from '../router/upstream.ts';
import { jsonPointerToParam, normaliseError } from './errors.ts';
import { ChatRequestSchema } from './schemas.ts';

describe('jsonPointerToParam', () => {
  it.each([
    ['', undefined, ''],
    ['/model', undefined, 'model'],
    ['/messages/0/role', undefined, 'messages[0].role'],
    ['/messages/12/content/3/image_url/url', undefined, 'messages[12].content[3].image_url.url'],
    ['/tools/0/function/name', undefined, 'tools[0].function.name'],
    ['/stop/1', undefined, 'stop[1]'],
    ['/0', undefined, '[0]'],
    ['', 'model', 'model'],
    ['/messages/0', 'role', 'messages[0].role'],
    ['/tools/0/function', 'name', 'tools[0].function.name'],
  ])('%j + %j → %j', (pointer, missing, param) => {
    expect(jsonPointerToParam(pointer, missing)).toBe(param);
  });

  it('a numeric-looking key that is not all digits stays a property', () => {
    expect(jsonPointerToParam('/metadata/1a')).toBe('metadata.1a');
  });
});

// The validator Fastify builds for the chat route (same options as the app).
const ajv = new Ajv({
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  allErrors: false,
  strict: false,
});
const validateChat = ajv.compile(ChatRequestSchema);

/** What Fastify throws for a body that fails the route schema. */
function validationError(body: unknown): Error & { validation: ErrorObject[]; statusCode: number } {
  expect(validateChat(body)).toBe(false);
  return Object.assign(new Error('body/… must …'), {
    validation: validateChat.errors ?? [],
    validationContext: 'body',
    statusCode: 400,
  });
}

const good = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

describe('normaliseError: schema validation (real ajv issues)', () => {
  const cases: { name: string; body: unknown; param: string; says: RegExp }[] = [
    { name: 'temperature above 2', body: { ...good, temperature: 2.5 }, param: 'temperature', says: /<= 2/ },
    {
      name: 'temperature a string',
      body: { ...good, temperature: '1' },
      param: 'temperature',
      says: /number/,
    },
    { name: 'top_p above 1', body: { ...good, top_p: 1.5 }, param: 'top_p', says: /<= 1/ },
    {
      name: 'max_tokens fractional',
      body: { ...good, max_tokens: 1.5 },
      param: 'max_tokens',
      says: /integer/,
    },
    {
      name: 'model missing',
      body: { messages: good.messages },
      param: 'model',
      says: /required property 'model'/,
    },
    { name: 'messages empty', body: { ...good, messages: [] }, param: 'messages', says: /fewer than 1/ },
    {
      name: 'a role that does not exist',
      body: { ...good, messages: [{ role: 'wizard', content: 'x' }] },
      param: 'messages[0].role',
      says: /"system".*"developer".*"user".*"assistant".*"tool"/,
    },
    {
      name: 'content of the wrong type',
      body: { ...good, messages: [{ role: 'user', content: 42 }] },
      param: 'messages[0].content',
      says: /string.*array.*null/,
    },
    {
      name: 'a bad detail deep inside a content array',
      body: {
        ...good,
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'https://x', detail: 'ultra' } }],
          },
        ],
      },
      param: 'messages[0].content[0].image_url.detail',
      says: /"low".*"high".*"auto"/,
    },
    {
      name: 'a tool without a name',
      body: { ...good, tools: [{ type: 'function', function: {} }] },
      param: 'tools[0].function.name',
      says: /required/,
    },
    {
      name: 'tool_choice unknown',
      body: { ...good, tool_choice: 'sometimes' },
      param: 'tool_choice',
      says: /"auto"/,
    },
  ];

  it.each(cases)('$name → 400 naming $param', ({ body, param, says }) => {
    const e = normaliseError(validationError(body));
    expect(e.status).toBe(400);
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe(param);
    expect(e.message.startsWith(`${param}: `)).toBe(true);
    expect(e.message).toMatch(says);
    expect(e.toBody()).toEqual({
      error: { message: e.message, type: 'invalid_request_error', code: 400, param },
    });
  });

  it('an issue at the root names "body"', () => {
    const e = normaliseError(validationError('just a string'));
    expect(e.param).toBe('body');
    expect(e.message).toMatch(/^body: /);
  });

  it('an empty validation list is not treated as a validation error', () => {
    const e = normaliseError(Object.assign(new Error('x'), { validation: [] }));
    expect(e.status).toBe(500);
  });
});

describe('normaliseError: Fastify parser errors', () => {
  it('body too large → 413', () => {
    const e = normaliseError(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    expect(e.status).toBe(413);
    expect(e.type).toBe('request_too_large');
  });

  it('wrong content type → 415', () => {
    const e = normaliseError(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE('text/plain'));
    expect(e.status).toBe(415);
    expect(e.type).toBe('unsupported_media_type');
  });

  it.each([
    ['invalid JSON', () => new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY()],
    ['empty JSON body', () => new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY()],
  ])('%s → 400 naming body', (_, make) => {
    const e = normaliseError(make());
    expect(e.status).toBe(400);
    expect(e.param).toBe('body');
    expect(e.message).toBe('body: must be valid JSON');
  });

  it('a JSON SyntaxError → 400 naming body', () => {
    let syntax: unknown;
    try {
      JSON.parse('{"a":');
    } catch (err) {
      syntax = err;
    }
    const e = normaliseError(syntax);
    expect(e.status).toBe(400);
    expect(e.param).toBe('body');
    expect(e.message).toMatch(/^body: /);
  });

  it('another Fastify 400 → 400 naming body', () => {
    const e = normaliseError(
      Object.assign(new Error('querystring/x must be string'), { statusCode: 400, code: 'FST_X' }),
    );
    expect(e.status).toBe(400);
    expect(e.param).toBe('body');
  });

  it('a URL Fastify cannot decode → 400 saying so', () => {
    const e = normaliseError(new errorCodes.FST_ERR_BAD_URL('/v1/%zz'));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/percent-encoding/);
  });

  it.each([
    [404, 'not_found'],
    [405, 'method_not_allowed'],
    [408, 'request_timeout'],
    [431, 'headers_too_large'],
    [422, 'invalid_request_error'],
  ])('another Fastify %i keeps its status with a SPEC type (%s)', (status, type) => {
    const e = normaliseError(
      Object.assign(new Error('framework says no'), { statusCode: status, code: 'FST_Y' }),
    );
    expect(e.status).toBe(status);
    expect(e.type).toBe(type);
    expect(e.toBody().error.code).toBe(status);
  });
});

describe('normaliseError: our own and unknown errors', () => {
  it('a GatewayError passes through as the same object', () => {
    const own = new GatewayError('budget_exceeded', 'budget of key k exhausted', { headers: { a: 'b' } });
    expect(normaliseError(own)).toBe(own);
  });

  it('a client abort → 499', () => {
    const e = normaliseError(new ClientAbortError());
    expect(e.status).toBe(499);
    expect(e.type).toBe('client_closed_request');
  });

  it.each([
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'sk-secret-123')")],
    ['a 500 Fastify error', Object.assign(new Error('db password=hunter2'), { statusCode: 500 })],
    [
      'an error with an unknown code',
      Object.assign(new Error('ECONNRESET at 10.0.0.7'), { code: 'ECONNRESET' }),
    ],
  ])('%s → 500 without leaking its message, keeping the cause for the log', (_, err) => {
    const e = normaliseError(err);
    expect(e.status).toBe(500);
    expect(e.type).toBe('internal_error');
    expect(e.message).toBe('internal error');
    expect(JSON.stringify(e.toBody())).not.toContain(err.message);
    expect(e.param).toBeUndefined();
    expect(e.cause).toBe(err);
  });

  it.each([
    ['a string', 'boom sk-secret'],
    ['a number', 42],
    ['an object', { reason: 'x' }],
    ['null', null],
    ['undefined', undefined],
  ])('a thrown non-error (%s) → 500', (_, thrownValue) => {
    const e = normaliseError(thrownValue);
    expect(e.status).toBe(500);
    expect(e.message).toBe('internal error');
  });
});
