import { describe, expect, it } from 'vitest';
import type { UpstreamErrorKind } from '../types.ts';
import { classifyOpenAIError, classifyOpenAIStreamError } from './errors.ts';

const body = (message: string, code?: string | null, type = 'invalid_request_error'): string =>
  JSON.stringify({ error: { message, type, code: code ?? null, param: null } });

describe('classifyOpenAIError: status and body → kind', () => {
  const table: { name: string; status: number; body: string; kind: UpstreamErrorKind }[] = [
    {
      name: '429 rate limit',
      status: 429,
      body: body('Rate limit reached', 'rate_limit_exceeded'),
      kind: 'rate_limited',
    },
    {
      name: '429 wins over a context message',
      status: 429,
      body: body('context length'),
      kind: 'rate_limited',
    },
    {
      name: '503 overloaded',
      status: 503,
      body: body('The engine is currently overloaded'),
      kind: 'overloaded',
    },
    { name: '529 overloaded', status: 529, body: 'overloaded', kind: 'overloaded' },
    { name: '500 server', status: 500, body: body('The server had an error'), kind: 'server' },
    { name: '502 html', status: 502, body: '<html>Bad Gateway</html>', kind: 'server' },
    { name: '504', status: 504, body: '', kind: 'server' },
    {
      name: '5xx wins over a context code',
      status: 500,
      body: body('x', 'context_length_exceeded'),
      kind: 'server',
    },
    { name: '401', status: 401, body: body('Incorrect API key provided', 'invalid_api_key'), kind: 'auth' },
    { name: '403', status: 403, body: body('Country not supported'), kind: 'auth' },
    {
      name: '404 model',
      status: 404,
      body: body('The model `x` does not exist', 'model_not_found'),
      kind: 'not_found',
    },
    {
      name: '400 context code',
      status: 400,
      body: body('too long', 'context_length_exceeded'),
      kind: 'context_length',
    },
    {
      name: '400 string_above_max_length',
      status: 400,
      body: body('too long', 'string_above_max_length'),
      kind: 'context_length',
    },
    {
      name: '400 context message (vLLM, no code)',
      status: 400,
      body: body("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"),
      kind: 'context_length',
    },
    {
      name: '400 "context length" message',
      status: 400,
      body: body('Input exceeds the Context Length'),
      kind: 'context_length',
    },
    {
      name: '400 "too many tokens" message',
      status: 400,
      body: body('Too many tokens in prompt'),
      kind: 'context_length',
    },
    { name: '413 payload too large', status: 413, body: body('Request too large'), kind: 'context_length' },
    {
      name: '400 azure content_filter',
      status: 400,
      body: body('filtered', 'content_filter'),
      kind: 'content_policy',
    },
    {
      name: '400 content_policy_violation code',
      status: 400,
      body: body('rejected', 'content_policy_violation'),
      kind: 'content_policy',
    },
    {
      name: '400 ResponsibleAIPolicyViolation code',
      status: 400,
      body: body('rejected', 'ResponsibleAIPolicyViolation'),
      kind: 'content_policy',
    },
    {
      name: '400 content management policy message',
      status: 400,
      body: body(
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
      ),
      kind: 'content_policy',
    },
    {
      name: '400 content policy message',
      status: 400,
      body: body('Your request violates our content policy'),
      kind: 'content_policy',
    },
    {
      name: '400 plain',
      status: 400,
      body: body("Invalid value for 'temperature'", 'invalid_value'),
      kind: 'bad_request',
    },
    { name: '422 validation', status: 422, body: '{"detail":"bad"}', kind: 'bad_request' },
    { name: '400 empty body', status: 400, body: '', kind: 'bad_request' },
  ];

  it.each(table)('$name → $kind', ({ status, body: text, kind }) => {
    const e = classifyOpenAIError(status, {}, text);
    expect(e.kind).toBe(kind);
    expect(e.status).toBe(status);
  });
});

describe('classifyOpenAIError: message and retry-after', () => {
  it('carries the provider’s own message', () => {
    expect(classifyOpenAIError(400, {}, body("Invalid value for 'temperature'")).message).toBe(
      "Invalid value for 'temperature'",
    );
  });

  it('falls back to a top-level message (some compatible servers)', () => {
    expect(classifyOpenAIError(400, {}, JSON.stringify({ message: 'model is required' })).message).toBe(
      'model is required',
    );
  });

  it.each([
    ['not JSON', '<html>oops</html>'],
    ['empty', ''],
    ['empty message', body('')],
    ['non-string message', JSON.stringify({ error: { message: 42 } })],
    ['error is a string', JSON.stringify({ error: 'boom' })],
  ])('without a usable message (%s) it says the status', (_, text) => {
    expect(classifyOpenAIError(502, {}, text).message).toBe('upstream answered 502');
  });

  it('a non-string code is ignored rather than crashing', () => {
    const e = classifyOpenAIError(400, {}, JSON.stringify({ error: { message: 'x', code: 123 } }));
    expect(e.kind).toBe('bad_request');
  });

  it("keeps the field and code the provider blames (a lost object's 404 is told apart by them)", () => {
    const text = JSON.stringify({
      error: {
        message: 'No such File object: file-1',
        type: 'invalid_request_error',
        param: 'id',
        code: null,
      },
    });
    const lost = classifyOpenAIError(404, {}, text);
    expect([lost.param, lost.code]).toEqual(['id', undefined]);
    const gone = classifyOpenAIError(404, {}, body('gone', 'DeploymentNotFound'));
    expect([gone.param, gone.code]).toEqual([undefined, 'DeploymentNotFound']);
  });

  it('reads Retry-After from the headers (seconds or ms)', () => {
    expect(classifyOpenAIError(429, { 'retry-after': '3' }, '').retryAfterMs).toBe(3_000);
    expect(classifyOpenAIError(429, { 'retry-after-ms': '150', 'retry-after': '3' }, '').retryAfterMs).toBe(
      150,
    );
    expect(classifyOpenAIError(429, {}, '').retryAfterMs).toBeUndefined();
    expect(classifyOpenAIError(503, { 'retry-after': '5' }, '').retryAfterMs).toBe(5_000);
  });
});

describe('classifyOpenAIStreamError: an error event inside a stream, which has no status', () => {
  const kind = (err: Record<string, unknown>) => classifyOpenAIStreamError(err).kind;
  it('takes the status its type stands for', () => {
    expect(kind({ type: 'invalid_request_error', code: 'invalid_prompt', message: 'Invalid prompt' })).toBe(
      'bad_request',
    );
    expect(kind({ type: 'requests', code: 'rate_limit_exceeded', message: 'slow down' })).toBe(
      'rate_limited',
    );
    expect(kind({ type: 'server_error', message: 'oops' })).toBe('server');
    expect(kind({ type: 'service_unavailable_error', message: 'busy' })).toBe('overloaded');
    expect(
      kind({ type: 'invalid_request_error', code: 'context_length_exceeded', message: 'too long' }),
    ).toBe('context_length');
    expect(kind({ type: 'invalid_request_error', code: 'content_filter', message: 'flagged' })).toBe(
      'content_policy',
    );
  });
  it('prefers a numeric status in code (vLLM)', () => {
    expect(classifyOpenAIStreamError({ type: 'BadRequestError', code: 400, message: 'bad' })).toEqual({
      kind: 'bad_request',
      status: 400,
      message: 'bad',
    });
    expect(kind({ type: 'whatever', code: 503, message: 'busy' })).toBe('overloaded');
  });
  it('an error that says nothing is the server’s', () => {
    expect(classifyOpenAIStreamError({})).toEqual({
      kind: 'server',
      status: 500,
      message: 'upstream stream error',
    });
    expect(kind({ type: 'mystery', message: 'x' })).toBe('server');
  });
});
