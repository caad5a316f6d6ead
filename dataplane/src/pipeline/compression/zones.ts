/**
 * Zoning and step splitting. A step is the unit the Recent window counts: the user turn
 * that led to an assistant message, the assistant message, and every tool message
 * answering its calls. Steps are never cut, so no request reaches a provider with a tool
 * result separated from its call.
 *
 * Chat completions are turn-based: a step ends after the tool messages whose ids answer the
 * assistant's `tool_calls`. Messages is step-based: an Anthropic user turn is atomic, so all
 * tool results that follow an assistant turn (translated to consecutive tool messages) stay
 * with it, matched or not.
 */
import type { ChatMessage } from '../../formats/openai/types.ts';
import type { StepFormat, Zones } from './types.ts';

const isSystem = (m: ChatMessage) => m.role === 'system' || m.role === 'developer';

/** Splits the non-system messages `idx` into steps (arrays of indexes, in order). */
export function splitSteps(
  messages: readonly ChatMessage[],
  idx: readonly number[],
  format: StepFormat,
): number[][] {
  const steps: number[][] = [];
  let current: number[] = [];
  let open = new Set<string>();
  let afterAssistant = false;
  for (const i of idx) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      // A tool message belongs to the step of the call it answers (or, on Messages, to the
      // assistant turn before it); an orphan still rides with the step it follows.
      current.push(i);
      if (m.tool_call_id !== undefined) open.delete(m.tool_call_id);
      continue;
    }
    const pending = format === 'chat' ? open.size > 0 : false;
    if (m.role === 'assistant') {
      if (afterAssistant && !pending && current.length > 0) {
        steps.push(current);
        current = [];
      }
      current.push(i);
      open = new Set((m.tool_calls ?? []).map((c) => c.id));
      afterAssistant = true;
      continue;
    }
    // A user (or other) message after an assistant step starts the next step, unless calls
    // of that assistant are still unanswered (their results come later).
    if (afterAssistant && !pending && current.length > 0) {
      steps.push(current);
      current = [];
      afterAssistant = false;
    }
    current.push(i);
  }
  if (current.length > 0) steps.push(current);
  return steps;
}

/**
 * System: every system/developer message. Last: the final message when it is a user message.
 * Recent: the last `stepWindow` steps that contain an assistant message (and any trailing
 * user turns between them and Last). History: everything else.
 */
export function zone(messages: readonly ChatMessage[], stepWindow: number, format: StepFormat): Zones {
  const system: number[] = [];
  const rest: number[] = [];
  messages.forEach((m, i) => (isSystem(m) ? system : rest).push(i));
  const lastIdx = rest.at(-1);
  const last = lastIdx !== undefined && messages[lastIdx]!.role === 'user' ? [lastIdx] : [];
  const body = last.length > 0 ? rest.slice(0, -1) : rest;
  const steps = splitSteps(messages, body, format);

  let kept = 0;
  let cut = steps.length;
  while (cut > 0) {
    const step = steps[cut - 1]!;
    const assistant = step.some((i) => messages[i]!.role === 'assistant');
    if (assistant && kept >= stepWindow) break;
    if (assistant) kept++;
    cut--;
  }
  return { system, history: steps.slice(0, cut).flat(), recent: steps.slice(cut).flat(), last };
}

/** True when every tool message answers a call of the assistant message before its run. */
export function pairingIntact(messages: readonly ChatMessage[]): boolean {
  let open = new Set<string>();
  let prev: ChatMessage | undefined;
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!prev || (prev.role !== 'assistant' && prev.role !== 'tool')) return false;
      if (m.tool_call_id === undefined || !open.has(m.tool_call_id)) return false;
      open.delete(m.tool_call_id);
    } else {
      if (open.size > 0) return false;
      open = new Set(m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []);
    }
    prev = m;
  }
  return true;
}
