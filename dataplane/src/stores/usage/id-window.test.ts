import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdWindow } from './id-window.ts';
import { packUuid, unpackUuid, UUID_BYTES } from './uuid-bytes.ts';

describe('record id window', () => {
  it('holds at most its bound, forgetting the oldest first, across growing and wrapping', () => {
    const w = new IdWindow(100);
    for (let i = 0; i < 1000; i++) {
      w.remember(`id-${i}`, i);
      expect(w.size).toBe(Math.min(i + 1, 100));
    }
    expect(w.has('id-899')).toBe(false);
    for (let i = 900; i < 1000; i++) expect(w.has(`id-${i}`)).toBe(true);
  });

  it('forgets what is due by a time, in the order remembered, and nothing later', () => {
    const w = new IdWindow(1000);
    for (let i = 0; i < 300; i++) w.remember(`id-${i}`, 10 * i);
    w.forgetDue(1000);
    expect(w.has('id-100')).toBe(false);
    expect(w.has('id-101')).toBe(true);
    expect(w.size).toBe(199);
    w.forgetDue(10_000);
    expect(w.size).toBe(0);
    // Empty and reused after: the ring's head wrapped past where it started.
    w.remember('again', 20_000);
    expect(w.has('again')).toBe(true);
  });

  it('keeps an id remembered again until its newest entry is forgotten', () => {
    const w = new IdWindow(3);
    w.remember('a', 1);
    w.remember('b', 2);
    w.remember('a', 3);
    w.forgetDue(1); // a's first entry: a is still remembered by its second
    expect(w.has('a')).toBe(true);
    w.remember('c', 4);
    w.remember('d', 5); // past the bound: b goes
    expect(w.has('b')).toBe(false);
    w.remember('e', 6); // then a's second entry
    expect(w.has('a')).toBe(false);
    expect(['c', 'd', 'e'].every((id) => w.has(id))).toBe(true);
  });

  it('keeps an id remembered again while the ring grows', () => {
    const w = new IdWindow(1000);
    w.remember('x', 0);
    for (let i = 0; i < 70; i++) w.remember(`id-${i}`, 1);
    w.remember('x', 2); // newest entry in the second allocation
    for (let i = 70; i < 200; i++) w.remember(`id-${i}`, 3); // grows again, moving both entries
    w.forgetDue(1); // the first x entry and id-0..69
    expect(w.has('x')).toBe(true);
    w.forgetDue(2);
    expect(w.has('x')).toBe(false);
  });

  it('grows a wrapped ring (its head moved by forgetting) without losing order or a repeated id', () => {
    const w = new IdWindow(1000);
    for (let i = 0; i < 64; i++) w.remember(`a-${i}`, i);
    w.forgetDue(9); // a-0..a-9 gone: the head is at slot 10
    for (let i = 64; i < 74; i++) w.remember(`a-${i}`, i); // fills slots 0..9: wrapped and full
    w.remember('a-20', 80); // grows while wrapped; a-20's newest entry is the last one
    for (let i = 0; i < 10; i++) expect(w.has(`a-${i}`)).toBe(false);
    expect(w.size).toBe(64);
    w.forgetDue(73); // every first entry, a-20's too
    expect(w.size).toBe(1);
    expect(w.has('a-20')).toBe(true);
    w.forgetDue(80);
    expect(w.size).toBe(0);
  });
});

describe('request ids as 16 bytes', () => {
  it('packs lowercase UUIDs and gives back the same text', () => {
    const buf = new Uint8Array(UUID_BYTES * 50);
    const ids = Array.from({ length: 50 }, () => randomUUID());
    ids.forEach((id, i) => expect(packUuid(id, buf, i * UUID_BYTES)).toBe(true));
    expect(ids.map((_, i) => unpackUuid(buf, i * UUID_BYTES))).toEqual(ids);
  });

  it('leaves anything else to be kept as text', () => {
    const buf = new Uint8Array(UUID_BYTES);
    const id = randomUUID();
    for (const other of [id.toUpperCase(), `${id}:compression`, id.replaceAll('-', ''), 'req-1', ''])
      expect(packUuid(other, buf, 0)).toBe(false);
    expect(buf.every((b) => b === 0)).toBe(true);
  });
});
