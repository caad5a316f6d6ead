/**
 * Session settings the gateway cannot meter, refused wherever a session is configured (minting
 * a client secret, `session.update`): input-audio transcription is billed by the provider apart
 * from responses, on another model with no price in the deployment, and a transcription-type
 * session produces no `response.done` to settle at all.
 */
import { isRecord } from './events.ts';

/** The first unmetered field set in `session` (a path inside it), or undefined when there is none. */
export function unmeteredSessionField(session: Record<string, unknown>): string | undefined {
  if (session.type !== undefined && session.type !== 'realtime') return 'type';
  // null turns transcription off, which is always allowed.
  if (session.input_audio_transcription != null) return 'input_audio_transcription';
  const audio = session.audio;
  if (isRecord(audio) && isRecord(audio.input) && audio.input.transcription != null)
    return 'audio.input.transcription';
  return undefined;
}

export const unmeteredReason = (field: string): string =>
  field === 'type'
    ? 'only realtime sessions are served (transcription sessions are not)'
    : 'input audio transcription is not served: the gateway cannot meter or limit its cost';
