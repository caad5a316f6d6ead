/**
 * The tenant's request guardrails on Realtime client events, with HTTP's verdicts: the texts a
 * model will read (conversation items' text parts, function call arguments and outputs, session
 * and response instructions, function tool descriptions) are put into a chat request in their
 * roles and go through the same stage as `/v1/chat/completions` — block refuses the event,
 * redact rewrites it, flag forwards it and records. Audio cannot be scanned: a tenant whose
 * policy forbids opting out of its checks gets audio input refused, never forwarded unread.
 * Live model output is not scanned, as live HTTP streams are not.
 */
import type { GuardrailVerdictSummary } from '../accounting/usage.ts';
import { GatewayError } from '../errors.ts';
import type { ChatMessage, ChatRequest, ToolDefinition } from '../formats/openai/types.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { compulsoryChecks, guardRequest } from '../pipeline/guardrails/stage.ts';
import { isRecord, type RealtimeEvent } from './events.ts';

/** A text in the probe request, and where its redacted form goes back in the event. */
interface Slot {
  message: ChatMessage;
  /** Copies the guarded form of `message` back into the event. */
  write(guarded: ChatMessage): void;
}

interface ToolSlot {
  tool: ToolDefinition;
  write(description: string): void;
}

interface Found {
  slots: Slot[];
  tools: ToolSlot[];
  audio: boolean;
}

const textOf = (m: ChatMessage, was: string): string => (typeof m.content === 'string' ? m.content : was);

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

function instructions(holder: Record<string, unknown>, found: Found): void {
  const text = holder.instructions;
  if (typeof text !== 'string' || text === '') return;
  found.slots.push({
    message: { role: 'system', content: text },
    write: (g) => (holder.instructions = textOf(g, text)),
  });
}

function item(value: unknown, found: Found): void {
  if (!isRecord(value)) return;
  switch (value.type) {
    case 'function_call_output':
      if (typeof value.output === 'string')
        found.slots.push({
          message: { role: 'tool', tool_call_id: 'call', content: value.output },
          write: (g) => (value.output = textOf(g, value.output as string)),
        });
      return;
    case 'function_call':
      if (typeof value.arguments === 'string')
        found.slots.push({
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call',
                type: 'function',
                function: { name: String(value.name ?? ''), arguments: value.arguments },
              },
            ],
          },
          write: (g) => (value.arguments = g.tool_calls?.[0]?.function.arguments ?? value.arguments),
        });
      return;
  }
  // A message (GA items say `type: 'message'`; the beta's could leave it out).
  if (!Array.isArray(value.content)) return;
  // An unknown role is read as a user's: the checks that see untrusted input all apply.
  const role = (ROLES.has(String(value.role)) ? value.role : 'user') as ChatMessage['role'];
  for (const part of value.content) {
    if (!isRecord(part)) continue;
    if (typeof part.audio === 'string' || part.type === 'input_audio') found.audio = true;
    if (typeof part.text === 'string')
      found.slots.push({
        message: { role, content: part.text },
        write: (g) => (part.text = textOf(g, part.text as string)),
      });
  }
}

function tools(value: unknown, found: Found): void {
  if (!Array.isArray(value)) return;
  for (const tool of value) {
    // Function tools only, as on HTTP: their descriptions are what the model reads.
    if (!isRecord(tool) || tool.type !== 'function' || typeof tool.description !== 'string') continue;
    found.tools.push({
      tool: { type: 'function', function: { name: String(tool.name ?? ''), description: tool.description } },
      write: (v) => (tool.description = v),
    });
  }
}

/** What a client event carries for the guardrails; an event with none is passed as it is. */
export function textsOf(event: RealtimeEvent): Found {
  const found: Found = { slots: [], tools: [], audio: false };
  switch (event.type) {
    case 'conversation.item.create':
      item(event.item, found);
      break;
    case 'input_audio_buffer.append':
      found.audio = true;
      break;
    case 'session.update':
      if (isRecord(event.session)) {
        instructions(event.session, found);
        tools(event.session.tools, found);
      }
      break;
    case 'response.create':
      if (isRecord(event.response)) {
        instructions(event.response, found);
        tools(event.response.tools, found);
        if (Array.isArray(event.response.input)) for (const i of event.response.input) item(i, found);
      }
      break;
  }
  return found;
}

export type Screened =
  | { ok: true; rewritten: boolean; verdict: GuardrailVerdictSummary | undefined }
  | { ok: false; error: GatewayError; verdict: GuardrailVerdictSummary | undefined };

function audioRefused(ctx: RequestContext): GatewayError {
  const policy = ctx.tenant.spec.guardrails?.policyRef?.name ?? '?';
  return new GatewayError(
    'permission_denied',
    `audio input cannot be scanned by the gateway's guardrails, and GuardrailPolicy ${policy} of tenant ${ctx.tenant.name} does not allow unscanned requests; send text (input_text) instead`,
  );
}

/**
 * The tenant's verdict on one client event; a redaction is written into `event` (then
 * `rewritten`). `ctx` is the session's current caller: its tenant's policy, its guard header.
 */
export function screenClientEvent(ctx: RequestContext, event: RealtimeEvent, model: string): Screened {
  const found = textsOf(event);
  if (found.audio && compulsoryChecks(ctx.tenant).length > 0)
    return { ok: false, error: audioRefused(ctx), verdict: undefined };
  if (found.slots.length === 0 && found.tools.length === 0)
    return { ok: true, rewritten: false, verdict: undefined };
  const probe: ChatRequest = {
    model,
    messages: found.slots.map((s) => s.message),
    ...(found.tools.length > 0 ? { tools: found.tools.map((t) => t.tool) } : {}),
  };
  // A scratch context: the verdict is this event's, not the session's.
  const scratch: RequestContext = { ...ctx, usage: { ...ctx.usage, guardrails: undefined } };
  let guarded: ChatRequest;
  try {
    guarded = guardRequest(scratch, probe);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { ok: false, error: err, verdict: scratch.usage.guardrails };
  }
  const verdict = scratch.usage.guardrails;
  if (guarded === probe) return { ok: true, rewritten: false, verdict };
  found.slots.forEach((slot, i) => {
    const message = guarded.messages[i];
    if (message) slot.write(message);
  });
  found.tools.forEach((slot, i) => {
    const description = guarded.tools?.[i]?.function.description;
    if (typeof description === 'string') slot.write(description);
  });
  return { ok: true, rewritten: true, verdict };
}

/**
 * Before the upgrade: the guard header's choice (`x-gantry-guard`) is judged as on HTTP (an
 * unknown name is a 400, an opt-out the policy forbids a 403), so a session never opens under a
 * selection every event would be refused for; and a client secret's session configuration
 * (its instructions and tools, minted earlier, perhaps under another policy) meets the
 * guardrails now, refused before the upgrade when blocked. Returns it as it may be sent.
 */
export function checkGuards(
  ctx: RequestContext,
  model: string,
  session: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  const scratch: RequestContext = { ...ctx, usage: { ...ctx.usage, guardrails: undefined } };
  guardRequest(scratch, { model, messages: [] });
  if (!session) return session;
  const event: RealtimeEvent = { type: 'session.update', session: structuredClone(session) };
  const screened = screenClientEvent(ctx, event, model);
  if (!screened.ok) throw screened.error;
  return event.session as Record<string, unknown>;
}
