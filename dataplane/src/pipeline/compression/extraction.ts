/**
 * The extraction call: the History zone, shortened by importance to the profile's input
 * budget, and instructions to answer with SPEC.md's state as one JSON object.
 */
import type { ChatRequest } from '../../formats/openai/types.ts';
import { allocate, scoreHistory, shorten } from './importance.ts';
import type { ProfileTuning } from './profile.ts';
import { messageText } from './text.ts';
import type { Measured, Profile } from './types.ts';

/** Opens the extraction prompt's user turn; the fake provider answers it with a deterministic state. */
export const EXTRACTION_MARKER = 'gantry-state-extraction/v1';

const SHAPE =
  '{"intent": string, "difficulty": "trivial"|"standard"|"complex", "reasoning_effort": "minimal"|"low"|"medium"|"high", ' +
  '"active_constraints": {"identifiers": {name: value}, "values": {name: value}, ' +
  '"actions_taken": [{"tool": string, "input": string, "result": string, "success": boolean}], ' +
  '"files_modified": [{"path": string, "change": string}], ' +
  '"progress": {"done": [string], "current": string, "next": [string]}, ' +
  '"requirements": {name: text}, "errors_encountered": [{"error": string, "resolution": string}]}, ' +
  '"conversation_status": string}';

const FOCUS: Readonly<Record<Profile, string>> = {
  'tool-agent':
    'Keep every tool action with its input and outcome; results may be summarised, identifiers never.',
  'code-agent': 'Keep every file path, symbol, signature and value the code work depends on.',
  chat: 'Keep what the user wants, what was agreed and what is still open.',
};

export function extractionInstructions(profile: Profile): string {
  return (
    'You compress the earlier part of a conversation into the working state another model needs to continue it. ' +
    'Keep executable workflow state, not history: the intent, every identifier and value exactly as written, ' +
    'actions taken and their outcomes, files modified, progress, pending requirements and errors with their resolution ' +
    '("unresolved" when open). ' +
    `${FOCUS[profile]} Answer with one JSON object of exactly this shape and nothing else:\n${SHAPE}`
  );
}

/** The History transcript, least important messages shortened first to fit `tuning`. */
export function transcript(history: readonly Measured[], tuning: ProfileTuning): string {
  const allowance = allocate(history, scoreHistory(history), tuning.extractionInputTokens);
  return history
    .map((h, i) => {
      const m = h.message;
      const who = m.role === 'tool' ? `tool(${m.tool_call_id ?? ''})` : m.role;
      return `<${who}>\n${shorten(messageText(m), allowance[i]!)}\n</${who}>`;
    })
    .join('\n');
}

export function extractionRequest(
  model: string,
  profile: Profile,
  history: readonly Measured[],
  tuning: ProfileTuning,
): ChatRequest {
  return {
    model,
    messages: [
      { role: 'system', content: extractionInstructions(profile) },
      { role: 'user', content: `${EXTRACTION_MARKER}\nConversation so far:\n${transcript(history, tuning)}` },
    ],
    max_tokens: tuning.stateBudgetTokens,
    temperature: 0,
    stream: false,
  };
}
