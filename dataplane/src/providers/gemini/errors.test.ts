import { describe, expect, it } from 'vitest';
import type { UpstreamErrorKind } from '../types.ts';
import { geminiAdapter } from './index.ts';

const body = (code: number, status: string, message: string, details?: unknown[]): string =>
  JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } });

describe('gemini error classification', () => {
  const table: { name: string; status: number; body: string; kind: UpstreamErrorKind }[] = [
    {
      name: '429 quota',
      status: 429,
      body: body(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded'),
      kind: 'rate_limited',
    },
    {
      name: '503 overloaded',
      status: 503,
      body: body(503, 'UNAVAILABLE', 'The model is overloaded.'),
      kind: 'overloaded',
    },
    {
      name: '500 internal',
      status: 500,
      body: body(500, 'INTERNAL', 'An internal error has occurred.'),
      kind: 'server',
    },
    {
      name: '504 deadline',
      status: 504,
      body: body(504, 'DEADLINE_EXCEEDED', 'Deadline expired.'),
      kind: 'server',
    },
    { name: '502 html page', status: 502, body: '<html>Bad Gateway</html>', kind: 'server' },
    {
      name: '401 unauthenticated',
      status: 401,
      body: body(401, 'UNAUTHENTICATED', 'Missing credentials'),
      kind: 'auth',
    },
    {
      name: '403 permission',
      status: 403,
      body: body(403, 'PERMISSION_DENIED', 'Permission denied'),
      kind: 'auth',
    },
    {
      name: '400 invalid api key',
      status: 400,
      body: body(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
        },
      ]),
      kind: 'auth',
    },
    {
      name: '400 region precondition',
      status: 400,
      body: body(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.'),
      kind: 'auth',
    },
    {
      name: '404 model',
      status: 404,
      body: body(404, 'NOT_FOUND', 'models/gemini-9 is not found for API version v1beta'),
      kind: 'not_found',
    },
    {
      name: '400 token limit',
      status: 400,
      body: body(
        400,
        'INVALID_ARGUMENT',
        'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
      ),
      kind: 'context_length',
    },
    {
      name: '400 bad schema',
      status: 400,
      body: body(
        400,
        'INVALID_ARGUMENT',
        'Invalid JSON payload received. Unknown name "additionalProperties"',
      ),
      kind: 'bad_request',
    },
    { name: '400 empty body', status: 400, body: '', kind: 'bad_request' },
    {
      name: 'array-wrapped body',
      status: 429,
      body: `[${body(429, 'RESOURCE_EXHAUSTED', 'Resource exhausted.')}]`,
      kind: 'rate_limited',
    },
  ];

  for (const c of table) {
    it(c.name, () => {
      const e = geminiAdapter.error(c.status, {}, c.body);
      expect(e.kind).toBe(c.kind);
      expect(e.status).toBe(c.status);
      expect(e.message.length).toBeGreaterThan(0);
    });
  }

  it("carries Google's message", () => {
    expect(geminiAdapter.error(404, {}, body(404, 'NOT_FOUND', 'no such model')).message).toBe(
      'no such model',
    );
    expect(geminiAdapter.error(400, {}, '').message).toBe('Gemini answered HTTP 400');
    expect(geminiAdapter.error(502, {}, '<html>Bad Gateway</html>').message).toBe('Gemini answered HTTP 502');
  });

  it('takes retryAfterMs from RetryInfo first, then the retry-after header', () => {
    const withInfo = body(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.', [
      { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' },
    ]);
    expect(geminiAdapter.error(429, { 'retry-after': '30' }, withInfo).retryAfterMs).toBe(12000);
    const fractional = body(429, 'RESOURCE_EXHAUSTED', 'q', [
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' },
    ]);
    expect(geminiAdapter.error(429, {}, fractional).retryAfterMs).toBe(1500);
    const plain = body(429, 'RESOURCE_EXHAUSTED', 'q');
    expect(geminiAdapter.error(429, { 'retry-after': ['7'] }, plain).retryAfterMs).toBe(7000);
    expect(geminiAdapter.error(429, {}, plain).retryAfterMs).toBeUndefined();
    expect(geminiAdapter.error(503, { 'retry-after': '5' }, '').retryAfterMs).toBeUndefined();
  });
});

describe('gemini error code', () => {
  it("is ErrorInfo's reason, so the router can tell a bad key or a disabled API from the caller's fault", () => {
    const e = geminiAdapter.error(
      403,
      {},
      body(403, 'PERMISSION_DENIED', 'Generative Language API has not been used in project 1 before.', [
        { '@type': 'type.googleapis.com/google.rpc.Help', links: [] },
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'SERVICE_DISABLED',
          domain: 'googleapis.com',
        },
      ]),
    );
    expect(e).toMatchObject({ kind: 'auth', code: 'SERVICE_DISABLED' });
    expect(
      geminiAdapter.error(
        400,
        {},
        body(400, 'INVALID_ARGUMENT', 'API key not valid.', [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' },
        ]),
      ).code,
    ).toBe('API_KEY_INVALID');
  });

  it('is absent without an ErrorInfo', () => {
    expect(geminiAdapter.error(404, {}, body(404, 'NOT_FOUND', 'gone')).code).toBeUndefined();
  });
});
