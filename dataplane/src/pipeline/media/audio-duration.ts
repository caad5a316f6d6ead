/**
 * Seconds of audio, for per-second pricing. Before the call: exact for WAV (its header
 * states the byte rate), otherwise a conservative bound from the size. After: what the
 * upstream's answer says, in whichever format it came.
 */

/** The lowest bitrate speech is commonly stored at (16 kbit/s): a size bound that is never short for real files. */
export const FLOOR_BYTES_PER_SECOND = 2_000;

/** Seconds the upload may last at most. */
export function estimateAudioSeconds(file: Buffer): number {
  const isWav =
    file.length >= 44 &&
    file.toString('latin1', 0, 4) === 'RIFF' &&
    file.toString('latin1', 8, 12) === 'WAVE';
  const byteRate = isWav ? file.readUInt32LE(28) : 0;
  // A WAV header claiming an implausibly low rate would underestimate: use the floor then.
  const rate = byteRate >= FLOOR_BYTES_PER_SECOND ? byteRate : FLOOR_BYTES_PER_SECOND;
  return Math.max(1, Math.ceil((isWav ? file.length - 44 : file.length) / rate));
}

/** `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` / `MM:SS.mmm` (WebVTT) → seconds. */
function cueSeconds(stamp: string): number {
  const [clock = '', millis = '0'] = stamp.split(/[.,]/);
  const parts = clock.split(':').map(Number);
  const seconds = parts.reduce((total, n) => total * 60 + n, 0);
  return seconds + Number(millis.padEnd(3, '0').slice(0, 3)) / 1000;
}

/** The end of the last cue of an SRT or WebVTT transcript. */
export function subtitleSeconds(text: string): number | undefined {
  let last: number | undefined;
  for (const m of text.matchAll(/-->\s*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})/g)) last = cueSeconds(m[1]!);
  return last;
}

/**
 * The duration the upstream reported: verbose_json's `duration`, json's
 * `usage: {type: 'duration', seconds}`, the last subtitle cue; undefined when the format
 * carries none (plain text).
 */
export function reportedSeconds(answer: Record<string, unknown> | string): number | undefined {
  if (typeof answer === 'string') return subtitleSeconds(answer);
  if (typeof answer.duration === 'number' && answer.duration >= 0) return answer.duration;
  const usage = answer.usage as { type?: unknown; seconds?: unknown } | undefined;
  if (usage?.type === 'duration' && typeof usage.seconds === 'number' && usage.seconds >= 0)
    return usage.seconds;
  return undefined;
}

/**
 * The lowest bitrate a transcribed upload is taken to have (4 kbit/s), for the ceiling on
 * the reported duration: below every codec the transcription APIs accept (Opus and MP3 go
 * down to 6 and 8 kbit/s), so an honest report is never cut; the hold's floor (16 kbit/s) is
 * an estimate, not a bound, and a 6 kbit/s voice note lasts longer than it says.
 */
export const CEILING_BYTES_PER_SECOND = 500;

/** The most seconds an upload of `bytes` can honestly be reported to last. */
export const maxAudioSeconds = (bytes: number): number =>
  Math.max(1, Math.ceil(bytes / CEILING_BYTES_PER_SECOND));

/**
 * The seconds an answered transcription is charged for: the upstream's report (the estimate
 * when the format carries none), cut at what the upload can last. Uncut, a reported 1e12 s
 * charged $1e8, and 1e300 s a charge the store could not take, so the request went free. (A
 * call left unanswered is charged audio-least.ts's lower bound instead.)
 */
export function billedAudioSeconds(answer: Record<string, unknown> | string, file: Buffer): number {
  return Math.min(reportedSeconds(answer) ?? estimateAudioSeconds(file), maxAudioSeconds(file.length));
}
