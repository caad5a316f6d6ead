import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import { mayAnswer, parserError, rawErrorResponse } from './protocol-errors.ts';

describe('parserError', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431, 'headers_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['HPE_INVALID_METHOD', 400, 'invalid_request_error'],
    [undefined, 400, 'invalid_request_error'],
  ])('%s → %i %s', (code, status, type) => {
    const e = parserError(code);
    expect(e.status).toBe(status);
    expect(e.type).toBe(type);
  });
});

describe('rawErrorResponse', () => {
  it('is a complete HTTP/1.1 answer with the SPEC.md body and an exact length', () => {
    const raw = rawErrorResponse(parserError('HPE_HEADER_OVERFLOW'), 'req-1');
    const [head, body] = raw.split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(body)}`);
    expect(head).toContain('Connection: close');
    expect(head).toContain('\r\nx-gantry-request-id: req-1\r\n');
    expect(head).toContain('\r\nx-request-id: req-1\r\n');
    expect(JSON.parse(body)).toEqual({
      error: { message: 'request headers exceed the size limit', type: 'headers_too_large', code: 431 },
    });
  });

  it("carries the error's own headers", () => {
    const raw = rawErrorResponse(
      new GatewayError('method_not_allowed', 'no', { headers: { Allow: 'GET' } }),
      'req-1',
    );
    expect(raw).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\nAllow: GET\r\n/);
  });
});

describe('mayAnswer', () => {
  it.each([
    ['no response under way', undefined, true],
    [
      'its own request still arriving, nothing sent (408, a bad chunk)',
      { headersSent: false, requestComplete: false },
      true,
    ],
    [
      'a pipelined request failed behind one not yet answered',
      { headersSent: false, requestComplete: true },
      false,
    ],
    ['a response already started', { headersSent: true, requestComplete: true }, false],
    [
      'a response started before its request finished arriving',
      { headersSent: true, requestComplete: false },
      false,
    ],
  ])('%s → %s', (_, underWay, expected) => {
    expect(mayAnswer(underWay)).toBe(expected);
  });
});
