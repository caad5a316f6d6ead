/**
 * OpenAI's media routes on the fake provider: images (generations JSON, edits and
 * variations multipart). Answers are deterministic functions of the request.
 */
import { createHash } from 'node:crypto';
import { asString } from './behaviour.ts';
import { isFileInfo } from './multipart.ts';
import { openaiError } from './openai-errors.ts';
import type { ErrorReply, Outcome, RouteContext } from './types.ts';

export type MediaEndpoint =
  'images/generations' | 'images/edits' | 'images/variations' | 'audio/transcriptions' | 'audio/speech';

/** Seconds of audio the fake hears in an upload: one per 16,000 bytes (128 kbit/s). */
export const FAKE_AUDIO_BYTES_PER_SECOND = 16_000;
/** Bytes of speech audio per input character. */
export const FAKE_SPEECH_BYTES_PER_CHAR = 100;

/** A valid 1×1 transparent PNG: what every b64_json image decodes to. */
export const FAKE_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const digest = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

export function mediaEndpointOf(pathname: string): MediaEndpoint | undefined {
  for (const e of [
    'images/generations',
    'images/edits',
    'images/variations',
    'audio/transcriptions',
    'audio/speech',
  ] as const)
    if (pathname.endsWith(`/${e}`)) return e;
  return undefined;
}

const invalid = (param: string, message: string): ErrorReply =>
  openaiError(400, message, 'invalid_request_error', null, param);

export function validateMedia(
  endpoint: MediaEndpoint,
  body: Record<string, unknown>,
  needModel: boolean,
): ErrorReply | undefined {
  if (needModel && typeof body.model !== 'string')
    return invalid('model', 'you must provide a model parameter');
  if (endpoint === 'audio/transcriptions')
    return isFileInfo(body.file) ? undefined : invalid('file', "'file' is a required file");
  if (endpoint === 'audio/speech') {
    if (typeof body.input !== 'string') return invalid('input', "'input' is a required property");
    return typeof body.voice === 'string' ? undefined : invalid('voice', "'voice' is a required property");
  }
  if (endpoint !== 'images/variations' && typeof body.prompt !== 'string')
    return invalid('prompt', "'prompt' is a required property");
  if (endpoint !== 'images/generations' && !isFileInfo(body.image))
    return invalid('image', "'image' is a required file");
  const n = body.n === undefined ? 1 : Number(body.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) return invalid('n', "'n' must be between 1 and 10");
  return undefined;
}

/**
 * `n` images; `response_format: b64_json` gives FAKE_PNG, otherwise (the default, `url`) a
 * URL derived from the endpoint, model, prompt and index.
 */
export function answerMedia(endpoint: MediaEndpoint, ctx: RouteContext, model: string): Outcome {
  const body = ctx.body;
  if (endpoint === 'audio/transcriptions') return answerTranscription(body);
  if (endpoint === 'audio/speech') return answerSpeech(body);
  const n = body.n === undefined ? 1 : Number(body.n);
  const prompt = asString(body.prompt) ?? '';
  const b64 = body.response_format === 'b64_json';
  const data = Array.from({ length: n }, (_, i) =>
    b64
      ? { b64_json: FAKE_PNG.toString('base64') }
      : { url: `https://fake-provider.invalid/${endpoint}/${digest(`${model}\n${prompt}\n${i}`)}.png` },
  );
  return { kind: 'json', body: { created: 1_700_000_000, data } };
}

const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

/** `input.length × FAKE_SPEECH_BYTES_PER_CHAR` bytes: an ID3 tag, then a byte pattern from the input. */
function answerSpeech(body: Record<string, unknown>): Outcome {
  const input = asString(body.input) ?? '';
  const format = asString(body.response_format) ?? 'mp3';
  const audio = Buffer.alloc(Math.max(3, [...input].length * FAKE_SPEECH_BYTES_PER_CHAR));
  const seed = createHash('sha256').update(input).digest();
  for (let i = 0; i < audio.length; i++) audio[i] = seed[i % seed.length]!;
  audio.write('ID3', 0, 'latin1');
  return { kind: 'raw', contentType: SPEECH_TYPES[format] ?? 'audio/mpeg', body: audio };
}

const clock = (seconds: number, separator: string): string => {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
};

/** `Fake transcription of <filename>.`, lasting size / FAKE_AUDIO_BYTES_PER_SECOND seconds, in every format. */
function answerTranscription(body: Record<string, unknown>): Outcome {
  const file = isFileInfo(body.file) ? body.file : { filename: 'audio', size: 0, type: '' };
  const duration = Math.round((file.size / FAKE_AUDIO_BYTES_PER_SECOND) * 100) / 100;
  const text = `Fake transcription of ${file.filename}.`;
  const format = asString(body.response_format) ?? 'json';
  const plain = (contentType: string, t: string): Outcome => ({
    kind: 'raw',
    contentType,
    body: Buffer.from(t),
  });
  if (format === 'text') return plain('text/plain; charset=utf-8', `${text}\n`);
  if (format === 'srt')
    return plain('text/plain; charset=utf-8', `1\n${clock(0, ',')} --> ${clock(duration, ',')}\n${text}\n\n`);
  if (format === 'vtt')
    return plain(
      'text/vtt; charset=utf-8',
      `WEBVTT\n\n${clock(0, '.')} --> ${clock(duration, '.')}\n${text}\n\n`,
    );
  if (format === 'verbose_json')
    return {
      kind: 'json',
      body: {
        task: 'transcribe',
        language: asString(body.language) ?? 'english',
        duration,
        text,
        segments: [{ id: 0, seek: 0, start: 0, end: duration, text, tokens: [], temperature: 0 }],
      },
    };
  return { kind: 'json', body: { text, usage: { type: 'duration', seconds: Math.ceil(duration) } } };
}
