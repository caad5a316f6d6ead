import { describe, expect, it } from 'vitest';
import {
  endUserOf,
  lengthPrefixed,
  partitionKey,
  scopeOf,
  sessionOf,
  MAX_SESSION_CHARS,
  type Scope,
} from './session.ts';

describe('sessionOf', () => {
  const conv = [
    { role: 'system' as const, content: 'be brief' },
    { role: 'user' as const, content: 'first question' },
    { role: 'assistant' as const, content: 'answer' },
  ];

  it('takes the header verbatim', () => {
    expect(sessionOf('my-session', conv)).toBe('my-session');
    expect(sessionOf(['a', 'b'], conv)).toBe('a');
  });

  it('hashes an overlong header into its own space', () => {
    const s = sessionOf('x'.repeat(MAX_SESSION_CHARS + 1), conv);
    expect(s).toMatch(/^h:[0-9a-f]{64}$/);
  });

  const as = (user: string, safetyIdentifier = '') => ({ user, safetyIdentifier });

  it('derives one per end user when the request names one, so alike openings of two people never share', () => {
    const alice = sessionOf(undefined, conv, as('alice'));
    expect(alice).toMatch(/^u:[0-9a-f]{64}$/);
    expect(sessionOf(undefined, [...conv, { role: 'user' as const, content: 'more' }], as('alice'))).toBe(
      alice,
    );
    expect(sessionOf(undefined, conv, as('bob'))).not.toBe(alice);
    expect(sessionOf(undefined, conv)).not.toBe(alice);
    // The header still wins: the client named the session itself.
    expect(sessionOf('my-session', conv, as('alice'))).toBe('my-session');
  });

  it('takes the end user from user and safety_identifier both', () => {
    expect(endUserOf({ user: 'alice', safety_identifier: 'sid' })).toEqual(as('alice', 'sid'));
    expect(endUserOf({ user: '', safety_identifier: 'sid' })).toEqual(as('', 'sid'));
    expect(endUserOf({ user: '', safety_identifier: '' })).toBeUndefined();
    expect(endUserOf({})).toBeUndefined();
  });

  it('an app with a fixed user and a safety_identifier per person gets a session per person', () => {
    const alice = sessionOf(undefined, conv, endUserOf({ user: 'acme-web', safety_identifier: 'alice' }));
    const bob = sessionOf(undefined, conv, endUserOf({ user: 'acme-web', safety_identifier: 'bob' }));
    expect(alice).not.toBe(bob);
    // Length-prefixed: moving characters between the two fields names someone else.
    expect(sessionOf(undefined, conv, as('ab', 'c'))).not.toBe(sessionOf(undefined, conv, as('a', 'bc')));
    expect(sessionOf(undefined, conv, as('x', ''))).not.toBe(sessionOf(undefined, conv, as('', 'x')));
  });

  it('derives one from system + first user turn: stable as the conversation grows, different between conversations', () => {
    const a = sessionOf(undefined, conv);
    expect(a).toMatch(/^d:[0-9a-f]{64}$/);
    expect(sessionOf(undefined, [...conv, { role: 'user', content: 'more' }])).toBe(a);
    expect(sessionOf(undefined, [conv[0]!, { role: 'user', content: 'another question' }])).not.toBe(a);
    expect(sessionOf('', conv)).toBe(a);
  });

  it('none without header, system or user message', () => {
    expect(sessionOf(undefined, [{ role: 'assistant', content: 'x' }])).toBeUndefined();
  });
});

describe('scope and partition key', () => {
  it('CCR is off without a session or an owner', () => {
    expect(scopeOf('acme', 'ab', undefined)).toBeUndefined();
    expect(scopeOf('', '', 's')).toBeUndefined();
    expect(scopeOf('acme', 'ab', 's')).toEqual({ teamId: 'acme', keyHash: 'ab', sessionId: 's' });
  });

  it('delimiter tricks do not collide (length prefixes, not separators)', () => {
    const k = (teamId: string, keyHash: string, sessionId: string) =>
      partitionKey({ teamId, keyHash, sessionId });
    expect(k('a', 'b:c', 'd')).not.toBe(k('a:b', 'c', 'd'));
    expect(k('acme', 'key', 'x')).not.toBe(k('acme', 'keyx', ''));
    expect(k('acme', '', 'keyx')).not.toBe(k('acme', 'key', 'x'));
    expect(k('t', 'k', 's')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('property: the encoding is injective (distinct scopes never share bytes), 20k random pairs', () => {
    let seed = 7;
    const r = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const alphabet = ['a', 'b', ':', '|', '\u0000', '\u0001', 'é', '🚀', '\u0004'];
    const str = () =>
      Array.from({ length: Math.floor(r() * 5) }, () => alphabet[Math.floor(r() * alphabet.length)]).join('');
    const scope = (): Scope => ({ teamId: str(), keyHash: str(), sessionId: str() });
    const seen = new Map<string, string>();
    for (let i = 0; i < 20_000; i++) {
      const s = scope();
      const id = JSON.stringify([s.teamId, s.keyHash, s.sessionId]);
      const bytes = lengthPrefixed([s.teamId, s.keyHash, s.sessionId]).toString('hex');
      const prev = seen.get(bytes);
      if (prev !== undefined) expect(prev).toBe(id);
      seen.set(bytes, id);
    }
    expect(seen.size).toBeGreaterThan(1000);
  });

  it('property: decoding the encoding gives the components back', () => {
    const decode = (buf: Buffer): string[] => {
      const out: string[] = [];
      for (let at = 0; at < buf.length;) {
        const len = buf.readUInt32BE(at);
        out.push(buf.subarray(at + 4, at + 4 + len).toString('utf8'));
        at += 4 + len;
      }
      return out;
    };
    for (const parts of [
      ['', '', ''],
      ['a', 'b', 'c'],
      ['\u0000\u0000\u0000\u0004', 'x', ''],
      ['🚀', 'é', '::'],
    ])
      expect(decode(lengthPrefixed(parts))).toEqual(parts);
  });
});
