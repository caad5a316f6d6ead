/**
 * The fewest seconds an upload can last, for a transcription its client left once sent: the
 * provider bills the duration it decodes, which the gateway never learns then, so the charge
 * must be a bound it cannot exceed. The hold's estimate (audio-duration.ts) bounds the other
 * way, at a low bitrate, and charged 5–8× what an answer would have for ordinary MP3s.
 */
import { FLOOR_BYTES_PER_SECOND, maxAudioSeconds } from './audio-duration.ts';
import { sniffMediaType } from './sniff.ts';

/**
 * Compressed audio at its richest (320 kbit/s): MP3's top bitrate; AAC, Vorbis and Opus encodes
 * of speech and music sit at or below it. An MP3 at 128 kbit/s is charged 40% of its length.
 */
export const COMPRESSED_MAX_BYTES_PER_SECOND = 40_000;
/** Uncompressed 48 kHz 24-bit stereo (2.3 Mbit/s): lossless audio is never larger. */
export const LOSSLESS_MAX_BYTES_PER_SECOND = 288_000;
/** 8 Mbit/s, 1080p video: MP4 and WebM uploads are often films whose bytes are mostly picture. */
export const VIDEO_MAX_BYTES_PER_SECOND = 1_000_000;

const RATE_BY_TYPE: Readonly<Record<string, number>> = {
  'audio/wav': LOSSLESS_MAX_BYTES_PER_SECOND,
  'audio/flac': LOSSLESS_MAX_BYTES_PER_SECOND,
  'video/mp4': VIDEO_MAX_BYTES_PER_SECOND,
  'audio/webm': VIDEO_MAX_BYTES_PER_SECOND,
};

/** A WAV's data seconds by its header's byte rate, when the rate is believable. */
function wavSeconds(file: Buffer): number | undefined {
  if (file.length < 44) return undefined;
  const byteRate = file.readUInt32LE(28);
  return byteRate >= FLOOR_BYTES_PER_SECOND ? (file.length - 44) / byteRate : undefined;
}

/** A FLAC's length from its STREAMINFO block (sample rate, total samples), when it states one. */
function flacSeconds(file: Buffer): number | undefined {
  // "fLaC", a metadata block header of type 0 (STREAMINFO), 10 bytes of block and frame sizes.
  if (file.length < 26 || (file[4]! & 0x7f) !== 0) return undefined;
  const packed = file.readBigUInt64BE(18); // 20 bits rate, 3 channels, 5 depth, 36 samples
  const rate = Number(packed >> 44n);
  const samples = Number(packed & 0xfffffffffn);
  return rate > 0 && samples > 0 ? samples / rate : undefined;
}

/** Seconds the upload lasts at least, under the same ceiling an answer's report is cut at. */
export function leastAudioSeconds(file: Buffer): number {
  const type = sniffMediaType(file);
  const stated =
    type === 'audio/wav' ? wavSeconds(file) : type === 'audio/flac' ? flacSeconds(file) : undefined;
  const seconds = stated ?? file.length / (RATE_BY_TYPE[type ?? ''] ?? COMPRESSED_MAX_BYTES_PER_SECOND);
  return Math.min(seconds, maxAudioSeconds(file.length));
}
