import { describe, expect, it } from 'vitest';
import { AUDIO_TYPES, checkMediaType, IMAGE_TYPES, sniffMediaType } from './sniff.ts';

const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('sniffMediaType', () => {
  it('knows images and audio containers by their first bytes', () => {
    expect(sniffMediaType(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe('image/png');
    expect(sniffMediaType(bytes([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffMediaType(bytes('RIFF', [0, 0, 0, 0], 'WEBPVP8 '))).toBe('image/webp');
    expect(sniffMediaType(bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt '))).toBe('audio/wav');
    expect(sniffMediaType(bytes('ID3', [4, 0, 0]))).toBe('audio/mpeg');
    expect(sniffMediaType(bytes('fLaC'))).toBe('audio/flac');
    expect(sniffMediaType(bytes([0, 0, 0, 0x20], 'ftypM4A '))).toBe('audio/mp4');
    expect(sniffMediaType(bytes('hello'))).toBeUndefined();
  });
});

describe('checkMediaType', () => {
  it('trusts the bytes over the declared type', () => {
    expect(checkMediaType(bytes('fLaC'), 'application/octet-stream', AUDIO_TYPES)).toEqual({
      ok: true,
      type: 'audio/flac',
    });
  });
  it('names what the file is when it is refused', () => {
    const pdf = checkMediaType(bytes('%PDF-1.7'), 'image/png', IMAGE_TYPES);
    expect(pdf).toMatchObject({ ok: false, reason: expect.stringContaining('application/pdf') });
    const unknown = checkMediaType(bytes('plain'), 'text/plain', IMAGE_TYPES);
    expect(unknown).toMatchObject({ ok: false, reason: expect.stringContaining('text/plain') });
  });
});
