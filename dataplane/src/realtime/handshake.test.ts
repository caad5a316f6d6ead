/**
 * The subprotocol list is judged before admission with the grammar `ws` enforces at the upgrade:
 * held here to agreement with `ws`'s own parser (read from its package files, which its exports
 * do not publish), so nothing passes our check that `ws` would then refuse.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handshakeProblem, subprotocolProblem } from './handshake.ts';

const require = createRequire(import.meta.url);
const wsParser = require(join(dirname(require.resolve('ws')), 'lib', 'subprotocol.js')) as {
  parse(header: string): Set<string>;
};
const wsAccepts = (value: string): boolean => {
  try {
    wsParser.parse(value);
    return true;
  } catch {
    return false;
  }
};

// As Node hands them over: header values come trimmed.
const VALUES = [
  'realtime',
  'realtime, openai-insecure-api-key.sk-abc_123',
  'openai-insecure-api-key.sk-k, openai-beta.realtime-v1',
  'a,b',
  'a ,b',
  'a\t,\tb',
  'a,  b',
  'realtime,,realtime',
  'realtime, realtime',
  'a,b,a',
  'a b',
  'a;b',
  'a/b',
  'a=b',
  'a"b',
  'réal',
  ',',
  ',a',
  'a,',
  '',
  "!#$%&'*+-.^_`|~09AZaz",
];

describe('subprotocolProblem', () => {
  it.each(VALUES)('agrees with ws on %j', (value) => {
    expect(subprotocolProblem(value) === undefined).toBe(wsAccepts(value));
  });
});

describe('handshakeProblem', () => {
  const headers = { 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-version': '13' };

  it('refuses HTTP/1.0 and a malformed subprotocol list, naming the problem', () => {
    expect(handshakeProblem(headers, '1.1')).toBeUndefined();
    expect(handshakeProblem(headers, '1.0')?.message).toContain('HTTP/1.1');
    const listed = handshakeProblem({ ...headers, 'sec-websocket-protocol': 'realtime,,realtime' }, '1.1');
    expect(listed).toMatchObject({ type: 'invalid_request_error', param: 'Sec-WebSocket-Protocol' });
  });
});
