import { describe, expect, it } from 'vitest';
import { unitCostUsd } from './pricing.ts';
import {
  billedAudioSeconds,
  CEILING_BYTES_PER_SECOND,
  estimateAudioSeconds,
  FLOOR_BYTES_PER_SECOND,
  reportedSeconds,
  subtitleSeconds,
} from './audio-duration.ts';

function wavHeader(byteRate: number, dataBytes: number): Buffer {
  const b = Buffer.alloc(44 + dataBytes);
  b.write('RIFF', 0, 'latin1');
  b.write('WAVEfmt ', 8, 'latin1');
  b.writeUInt32LE(byteRate, 28);
  return b;
}

describe('estimateAudioSeconds', () => {
  it('reads a WAV header exactly and bounds anything else by the floor bitrate', () => {
    expect(estimateAudioSeconds(wavHeader(32_000, 96_000))).toBe(3);
    expect(estimateAudioSeconds(Buffer.alloc(10 * FLOOR_BYTES_PER_SECOND))).toBe(10);
    expect(estimateAudioSeconds(Buffer.alloc(1))).toBe(1);
  });
  it('does not trust a WAV header with an implausibly low rate', () => {
    expect(estimateAudioSeconds(wavHeader(1, 4_000))).toBe(2);
  });
});

describe('reportedSeconds', () => {
  it('reads verbose_json, json usage and subtitle cues', () => {
    expect(reportedSeconds({ text: 'x', duration: 7.5 })).toBe(7.5);
    expect(reportedSeconds({ text: 'x', usage: { type: 'duration', seconds: 4 } })).toBe(4);
    expect(reportedSeconds({ text: 'x', usage: { type: 'tokens', input_tokens: 9 } })).toBeUndefined();
    expect(
      reportedSeconds('1\n00:00:00,000 --> 00:00:02,500\na\n\n2\n00:00:02,500 --> 00:01:03,250\nb\n'),
    ).toBe(63.25);
    expect(subtitleSeconds('WEBVTT\n\n00:01.000 --> 00:04.500\nhi\n')).toBe(4.5);
    expect(reportedSeconds('just text')).toBeUndefined();
  });
});

describe('billedAudioSeconds', () => {
  // A 60 s voice note in Opus at 8 kbit/s: 60 kB, estimated (held) at 30 s.
  const note = Buffer.alloc(60_000, 1);
  const p = { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perSecond: 0.0001 };

  it('charges an honest report above the hold estimate as reported', () => {
    expect(billedAudioSeconds({ duration: 60 }, note)).toBe(60);
  });

  it.each([{ duration: 1e12 }, { duration: Infinity }, { usage: { type: 'duration', seconds: 1e300 } }])(
    'cuts an absurd report (%o) at what the upload can last',
    (body) => {
      const seconds = billedAudioSeconds(body, note);
      expect(seconds).toBe(60_000 / CEILING_BYTES_PER_SECOND);
      expect(unitCostUsd(p, 'perSecond', seconds)).toBeLessThanOrEqual(0.012);
    },
  );

  it('charges the estimate when the format carries no duration', () => {
    expect(billedAudioSeconds('just text', note)).toBe(estimateAudioSeconds(note));
  });
});
