import { describe, expect, it } from 'vitest';
import { closesConnection } from './app.ts';
import { pickEvictable, type ConnectionUse } from './connections.ts';
import { nodeServerTimeouts } from './limits.ts';

const idle: ConnectionUse = { request: undefined };
const receiving: ConnectionUse = { request: { complete: false } };
const serving: ConnectionUse = { request: { complete: true } };

describe('pickEvictable', () => {
  it('takes the least recently active connection that is not serving a received request', () => {
    expect(
      pickEvictable([
        ['stream', serving],
        ['slow-body', receiving],
        ['idle', idle],
      ]),
    ).toBe('slow-body');
    expect(
      pickEvictable([
        ['a', serving],
        ['idle', idle],
      ]),
    ).toBe('idle');
  });

  it('never evicts a response in progress', () => {
    expect(
      pickEvictable([
        ['a', serving],
        ['b', serving],
      ]),
    ).toBeUndefined();
  });
});

describe('nodeServerTimeouts', () => {
  it('keeps headers within the receive timeout and checks often enough to enforce both', () => {
    const t = nodeServerTimeouts({
      receiveTimeoutMs: 1_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 1,
    });
    expect(t).toEqual({
      requestTimeout: 1_000,
      headersTimeout: 1_000,
      keepAliveTimeout: 65_000,
      connectionsCheckingInterval: 100,
    });
    const defaults = nodeServerTimeouts({
      receiveTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 1,
    });
    expect(defaults.connectionsCheckingInterval).toBe(1_000);
  });
});

describe('closesConnection', () => {
  it('closes after answers that leave the body unread by an unauthenticated caller', () => {
    expect(closesConnection(401, false)).toBe(true);
    expect(closesConnection(413, true)).toBe(true);
    expect(closesConnection(403, false)).toBe(true);
    expect(closesConnection(403, true)).toBe(false); // a guardrail block: the caller is known
    expect(closesConnection(400, true)).toBe(false);
    expect(closesConnection(429, true)).toBe(false);
  });
});
