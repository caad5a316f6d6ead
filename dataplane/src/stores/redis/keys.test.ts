import { describe, expect, it } from 'vitest';
import { KeySpace } from './keys.ts';

describe('KeySpace', () => {
  it('names keys the same way whether or not the name was cached, past the cache bound too', () => {
    const keys = new KeySpace('gx');
    const ref = { tenant: 'a:b{c}', keyId: 'k/1 é' };
    const first = keys.budget(ref);
    expect(first).toBe('gx:{a%3Ab%7Bc%7D}:key:k%2F1%20%C3%A9:budget');
    expect(keys.rateWindow(ref)).toBe('gx:{a%3Ab%7Bc%7D}:key:k%2F1%20%C3%A9:rl:w');
    expect(keys.wallet(ref.tenant)).toBe('gx:{a%3Ab%7Bc%7D}:wallet');
    // More distinct keys than the cache holds: it starts over, names do not change.
    for (let i = 0; i < 10_050; i++) {
      expect(keys.reservations({ tenant: `t${i % 7}`, keyId: `k${i}` })).toBe(`gx:{t${i % 7}}:key:k${i}:res`);
    }
    expect(keys.budget(ref)).toBe(first);
  });

  it('keeps names of different tenants and keys apart', () => {
    const keys = new KeySpace();
    const a = keys.budget({ tenant: 't', keyId: 'x:y' });
    const b = keys.budget({ tenant: 't:x', keyId: 'y' });
    expect(a).not.toBe(b);
    expect(keys.spent({ tenant: 't', keyId: 'k' }, 'm2026-11')).toBe('gantry:{t}:key:k:spent:m2026-11');
  });
});
