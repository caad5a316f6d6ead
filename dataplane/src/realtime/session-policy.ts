/**
 * Session settings the gateway cannot meter, refused wherever a session is configured (minting
 * a client secret, `session.update`): input-audio transcription is billed by the provider apart
 * from responses, on another model with no price in the deployment, and a transcription-type
 * session produces no `response.done` to settle at all. MCP tools (`type: "mcp"`) are called by
 * the provider itself on a server the client names: their calls and results never pass the
 * gateway, which can neither scan nor meter them.
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
  if (hasMcpTool(session.tools)) return 'tools';
  return undefined;
}

/** Whether a `tools` list holds an MCP tool (also refused on `response.create`). */
export const hasMcpTool = (tools: unknown): boolean =>
  Array.isArray(tools) && tools.some((t) => isRecord(t) && t.type === 'mcp');

export const unmeteredReason = (field: string): string =>
  field === 'type'
    ? 'only realtime sessions are served (transcription sessions are not)'
    : field.endsWith('tools')
      ? 'MCP tools (type "mcp") are not served: the provider calls them directly, and the gateway can neither scan nor meter those calls; use function tools'
      : 'input audio transcription is not served: the gateway cannot meter or limit its cost';
