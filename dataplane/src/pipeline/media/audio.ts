/** Transcriptions (multipart upload, priced per second) and speech (binary stream, priced per character). */
import { invalidParam } from '../../errors.ts';
import type { MediaFile } from '../../providers/types.ts';
import { classifyUpstreamFailure, type UpstreamResponse } from '../../router/upstream.ts';
import type { Served } from '../chat.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { billedAudioSeconds, estimateAudioSeconds } from './audio-duration.ts';
import { leastAudioSeconds } from './audio-least.ts';
import { admitMedia, executeMedia, readJsonObject, sendMedia, settleMedia, unitsCharge } from './run.ts';

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** OpenAI's ceiling on speech input. */
export const MAX_SPEECH_CHARACTERS = 4096;
const SPEECH_FORMATS = new Set(['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm']);

export interface Transcription extends Served {
  format: TranscriptionFormat;
  /** JSON formats: the object; text formats: the text and its content type. */
  body: Record<string, unknown> | string;
  contentType: string;
  costUsd: number;
  seconds: number;
}

export function transcriptionFormat(fields: Readonly<Record<string, string>>): TranscriptionFormat {
  const format = fields.response_format ?? 'json';
  if (!(TRANSCRIPTION_FORMATS as readonly string[]).includes(format))
    throw invalidParam('response_format', `must be one of ${TRANSCRIPTION_FORMATS.join(', ')}`);
  return format as TranscriptionFormat;
}

const isJsonFormat = (f: TranscriptionFormat): boolean => f === 'json' || f === 'verbose_json';

export async function runTranscription(
  deps: PipelineDeps,
  ctx: RequestContext,
  fields: Record<string, string>,
  file: MediaFile,
): Promise<Transcription> {
  const model = fields.model;
  if (!model) throw invalidParam('model', 'is required');
  const format = transcriptionFormat(fields);
  const estimate = estimateAudioSeconds(file.data);
  const routing = await admitMedia(deps, ctx, {
    endpoint: 'audio.transcriptions',
    path: '/v1/audio/transcriptions',
    model,
    capability: 'audio',
    unit: 'perSecond',
    estimateUnits: estimate,
  });
  const body = { kind: 'multipart' as const, fields, files: [file] };
  const routed = await executeMedia(
    deps,
    ctx,
    routing,
    async (call) => {
      const res = await sendMedia(call, 'audio/transcriptions', body, false);
      const contentType = headerOf(res, 'content-type') ?? 'text/plain; charset=utf-8';
      if (isJsonFormat(format)) return { body: await readJsonObject(call, res), contentType };
      try {
        return { body: await res.body.text(), contentType };
      } catch (err) {
        throw classifyUpstreamFailure(err, call.signal);
      }
    },
    // Left once sent: the upload was heard; the fewest seconds it can last (never the hold's bound).
    unitsCharge('perSecond', leastAudioSeconds(file.data)),
  );
  // Plain text carries no duration: the estimate (exact for WAV) is charged then.
  const seconds = billedAudioSeconds(routed.value.body, file.data);
  const cost = await settleMedia(deps, ctx, routed, 'perSecond', seconds);
  return {
    format,
    ...routed.value,
    costUsd: cost,
    seconds,
    deployment: routed.deployment,
    log: routed.log,
  };
}

function headerOf(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export interface Speech extends Served {
  audio: UpstreamResponse['body'];
  contentType: string;
  costUsd: number;
}

/** Checked fields; the character count is what is priced. */
export function speechInput(body: Record<string, unknown>): { model: string; characters: number } {
  if (typeof body.model !== 'string' || body.model === '') throw invalidParam('model', 'is required');
  if (typeof body.input !== 'string' || body.input === '') throw invalidParam('input', 'is required');
  if (typeof body.voice !== 'string' && (typeof body.voice !== 'object' || body.voice === null))
    throw invalidParam('voice', 'is required');
  const characters = [...body.input].length;
  if (characters > MAX_SPEECH_CHARACTERS)
    throw invalidParam('input', `is ${characters} characters; at most ${MAX_SPEECH_CHARACTERS} are accepted`);
  const format = body.response_format;
  if (format !== undefined && (typeof format !== 'string' || !SPEECH_FORMATS.has(format)))
    throw invalidParam('response_format', `must be one of ${[...SPEECH_FORMATS].join(', ')}`);
  if (body.speed !== undefined && (typeof body.speed !== 'number' || body.speed < 0.25 || body.speed > 4))
    throw invalidParam('speed', 'must be a number from 0.25 to 4');
  return { model: body.model, characters };
}

/**
 * Admit, call, and settle as soon as the upstream accepts: the price depends only on the
 * input, so the audio is then passed through as it arrives, never buffered.
 */
export async function runSpeech(
  deps: PipelineDeps,
  ctx: RequestContext,
  body: Record<string, unknown>,
): Promise<Speech> {
  const { model, characters } = speechInput(body);
  const routing = await admitMedia(deps, ctx, {
    endpoint: 'audio.speech',
    path: '/v1/audio/speech',
    model,
    capability: 'audio',
    unit: 'perCharacter',
    estimateUnits: characters,
    stream: true,
  });
  const routed = await executeMedia(
    deps,
    ctx,
    routing,
    (call) => sendMedia(call, 'audio/speech', { kind: 'json', json: body }, true),
    // Left before the audio started: the input was read, and it is what is priced.
    unitsCharge('perCharacter', characters),
  );
  const cost = await settleMedia(deps, ctx, routed, 'perCharacter', characters);
  return {
    audio: routed.value.body,
    contentType: headerOf(routed.value, 'content-type') ?? 'application/octet-stream',
    costUsd: cost,
    deployment: routed.deployment,
    log: routed.log,
  };
}
