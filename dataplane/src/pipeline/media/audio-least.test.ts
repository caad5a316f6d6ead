import { describe, expect, it } from 'vitest';
import { estimateAudioSeconds, maxAudioSeconds } from './audio-duration.ts';
import {
  COMPRESSED_MAX_BYTES_PER_SECOND,
  leastAudioSeconds,
  LOSSLESS_MAX_BYTES_PER_SECOND,
  VIDEO_MAX_BYTES_PER_SECOND,
} from './audio-least.ts';

/** `seconds` of MP3 at `kbps`, as a file starts (ID3 tag): what a provider would report. */
const mp3 = (seconds: number, kbps: number): Buffer => {
  const b = Buffer.alloc((seconds * kbps * 1000) / 8);
  b.write('ID3', 0, 'latin1');
  return b;
};

function wav(byteRate: number, dataBytes: number): Buffer {
  const b = Buffer.alloc(44 + dataBytes);
  b.write('RIFF', 0, 'latin1');
  b.write('WAVEfmt ', 8, 'latin1');
  b.writeUInt32LE(byteRate, 28);
  return b;
}

/** A FLAC whose STREAMINFO states `samples` at `rate` Hz, padded to `bytes`. */
function flac(rate: number, samples: number, bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  b.write('fLaC', 0, 'latin1');
  b[4] = 0x80; // last metadata block, type 0 (STREAMINFO)
  b.writeUIntBE(34, 5, 3);
  // 20 bits rate, 3 bits channels-1 (stereo), 5 bits depth-1 (16), 36 bits samples.
  const packed = (BigInt(rate) << 44n) | (1n << 41n) | (15n << 36n) | BigInt(samples);
  b.writeBigUInt64BE(packed, 18);
  return b;
}

describe('leastAudioSeconds: a transcription left once sent is never charged more than answered', () => {
  it.each([32, 64, 128, 192, 320])('an MP3 at %i kbit/s is charged at most its length', (kbps) => {
    const file = mp3(60, kbps);
    expect(leastAudioSeconds(file)).toBeLessThanOrEqual(60);
    expect(leastAudioSeconds(file)).toBe(file.length / COMPRESSED_MAX_BYTES_PER_SECOND);
    // The hold's estimate bounds the other way: 5–8× for ordinary MP3s.
    expect(estimateAudioSeconds(file)).toBeGreaterThanOrEqual(60 * (kbps >= 128 ? 8 : 1));
  });

  it('a WAV is its header’s exact length, a FLAC its STREAMINFO’s', () => {
    expect(leastAudioSeconds(wav(32_000, 96_000))).toBe(3);
    // 44.1 kHz, 90 s, in 4 MB (a ~45% FLAC): 90 s, not 4 MB at some rate.
    expect(leastAudioSeconds(flac(44_100, 44_100 * 90, 4_000_000))).toBe(90);
  });

  it('without a stated length, lossless and video containers are taken at their richest rates', () => {
    expect(leastAudioSeconds(wav(1, 2_880_000))).toBeCloseTo(2_880_044 / LOSSLESS_MAX_BYTES_PER_SECOND);
    expect(leastAudioSeconds(flac(44_100, 0, 2_880_000))).toBe(2_880_000 / LOSSLESS_MAX_BYTES_PER_SECOND);
    const mp4 = Buffer.alloc(8_000_000);
    mp4.write('ftypisom', 4, 'latin1');
    expect(leastAudioSeconds(mp4)).toBe(8_000_000 / VIDEO_MAX_BYTES_PER_SECOND);
  });

  it('a header stating more than the bytes can hold is cut where an answer’s report is', () => {
    const lying = flac(1, 2 ** 35, 10_000);
    expect(leastAudioSeconds(lying)).toBe(maxAudioSeconds(10_000));
  });
});
