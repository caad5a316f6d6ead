/**
 * The tenant's request guardrails on Realtime client events, with HTTP's verdicts: the texts a
 * model will read (conversation items' text parts, function call arguments and outputs, session
 * and response instructions, function tool descriptions) are put into a chat request in their
 * roles, with prompt-template variables and audio transcripts, and go through the same stage as
 * `/v1/chat/completions` — block refuses the event,
 * redact rewrites it, flag forwards it and records. Audio cannot be scanned: a tenant whose
 * policy forbids opting out of its checks gets audio input refused, never forwarded unread, and
 * so a stored prompt template (`prompt.id`), whose text the gateway never sees.
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
  /** Where a prompt template is referenced (`session.prompt`): its stored text is never seen. */
  prompt?: string;
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
    // An audio part's transcript is text the model reads, and may be sent without its audio.
    if (typeof part.transcript === 'string')
      found.slots.push({
        message: { role, content: part.transcript },
        write: (g) => (part.transcript = textOf(g, part.transcript as string)),
      });
  }
}

/**
 * A prompt template's variables (`prompt: {id, version, variables}`): strings and input_text
 * parts are text the model reads, scanned as a user's. The template itself is stored at the
 * provider and never passes the gateway (see `promptRefused`).
 */
function prompt(holder: Record<string, unknown>, where: string, found: Found): void {
  const value = holder.prompt;
  if (value == null) return;
  found.prompt = `${where}.prompt`;
  const variables = isRecord(value) && isRecord(value.variables) ? value.variables : undefined;
  if (!variables) return;
  for (const [name, v] of Object.entries(variables)) {
    if (typeof v === 'string')
      found.slots.push({
        message: { role: 'user', content: v },
        write: (g) => (variables[name] = textOf(g, v)),
      });
    else if (isRecord(v) && typeof v.text === 'string')
      found.slots.push({
        message: { role: 'user', content: v.text },
        write: (g) => (v.text = textOf(g, v.text as string)),
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
        prompt(event.session, 'session', found);
        tools(event.session.tools, found);
      }
      break;
    case 'response.create':
      if (isRecord(event.response)) {
        instructions(event.response, found);
        prompt(event.response, 'response', found);
        tools(event.response.tools, found);
        if (Array.isArray(event.response.input)) for (const i of event.response.input) item(i, found);
      }
      break;
  }
  return found;
}

/** Characters of `event` the guardrails would scan (its texts and tool descriptions). */
export function scannedChars(event: RealtimeEvent): number {
  const found = textsOf(event);
  let chars = 0;
  for (const { message } of found.slots) {
    if (typeof message.content === 'string') chars += message.content.length;
    for (const call of message.tool_calls ?? []) chars += call.function.arguments.length;
  }
  for (const { tool } of found.tools) chars += tool.function.description?.length ?? 0;
  return chars;
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

/** A stored prompt template is text the guardrails cannot read, as audio is. */
function promptRefused(ctx: RequestContext, param: string): GatewayError {
  const policy = ctx.tenant.spec.guardrails?.policyRef?.name ?? '?';
  return new GatewayError(
    'permission_denied',
    `${param}: a stored prompt template cannot be scanned by the gateway's guardrails (only its variables pass through the gateway), and GuardrailPolicy ${policy} of tenant ${ctx.tenant.name} does not allow unscanned requests; send the instructions as text instead`,
    { param },
  );
}

/**
 * The tenant's verdict on one client event; a redaction is written into `event` (then
 * `rewritten`). `ctx` is the session's current caller: its tenant's policy, its guard header.
 */
export function screenClientEvent(ctx: RequestContext, event: RealtimeEvent, model: string): Screened {
  const found = textsOf(event);
  const compulsory = (found.audio || found.prompt !== undefined) && compulsoryChecks(ctx.tenant).length > 0;
  if (compulsory && found.audio) return { ok: false, error: audioRefused(ctx), verdict: undefined };
  if (compulsory && found.prompt !== undefined)
    return { ok: false, error: promptRefused(ctx, found.prompt), verdict: undefined };
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
