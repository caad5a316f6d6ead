/**
 * What a request is, for the cache: the query (text of the last user message), the context
 * (the user, assistant and tool turns before it) and the partition its entries live in.
 *
 * The partition is the tenant, the client format and a hash of everything else that changes
 * the answer — the model that would serve, every parameter, and the instructions (system and
 * developer messages) verbatim — so two requests are only ever compared when a cached answer
 * to one is a valid answer to the other. The rule is "everything counts unless listed as not
 * changing the answer" (IGNORED_FIELDS): an unknown or provider-specific field splits the
 * cache rather than serving a wrong answer. Earlier turns are compared by meaning (the
 * context embedding) and by their facts (lookalike.ts), never ignored.
 */
import { createHash } from 'node:crypto';
import type { ChatMessage, ChatRequest } from '../../formats/openai/types.ts';
import { partitionKey } from '../../stores/cache-entries/partition.ts';
import { extractFacts, factsSignature } from './lookalike.ts';
import type { CacheFormat } from './policy.ts';

export interface CacheScope {
  /** Tenant name (Tenant metadata.name). */
  tenant: string;
  format: CacheFormat;
  /** Embedder id: vectors of different embedders are never compared. */
  embedder: string;
}

export interface CacheKeyParts {
  query: string;
  context: string;
  partition: string;
}

/**
 * Fields that do not change which answer is right, so they stay out of the partition:
 * - `messages`: split below into instructions (in the partition), context and query;
 * - transport and bookkeeping: stream, stream_options, metadata, user, store, service_tier,
 *   prompt_cache_key, safety_identifier — a streamed request hits a non-streamed entry;
 * - length limits: max_tokens, max_completion_tokens — checked per entry instead
 *   (`entryServes`), so a short limit never receives a longer answer;
 * - tools, tool_choice, parallel_tool_calls, functions, function_call — requests with tools
 *   are never cached at all, and without tools the others change nothing.
 * Sampling (temperature, top_p, top_k, seed, penalties) is NOT here: a request asking for a
 * different randomness, or a reproducible seed, asks for a different answer.
 */
export const IGNORED_FIELDS: ReadonlySet<string> = new Set([
  'messages',
  'stream',
  'stream_options',
  'metadata',
  'user',
  'store',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
  'max_tokens',
  'max_completion_tokens',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'functions',
  'function_call',
]);

/** Version of the partition shape: bumped whenever its layout changes, so old entries miss. */
export const SHAPE_VERSION = 3;

/** Long conversations: the start (system prompt, task) and the recent turns say most. */
export const CONTEXT_HEAD_CHARS = 4_000;
export const CONTEXT_TAIL_CHARS = 12_000;

/** Text of a message, and the non-text parts (images, audio, files) it carries. */
function messageText(m: ChatMessage, media: unknown[]): string {
  const texts: string[] = [];
  if (typeof m.content === 'string') texts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const part of m.content) {
      if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
      else media.push(part);
    }
  }
  for (const call of m.tool_calls ?? []) texts.push(`${call.function.name}(${call.function.arguments})`);
  return texts.join('\n');
}

const line = (m: ChatMessage, text: string): string => `${m.role}: ${text}`;

/** Roles whose messages instruct the model: compared exactly, in the partition. */
const INSTRUCTION_ROLES: ReadonlySet<string> = new Set(['system', 'developer']);

/** Message fields the context text already carries; any other (name, cache_control…) is keyed exactly. */
const TEXT_FIELDS: ReadonlySet<string> = new Set(['role', 'content', 'tool_calls', 'reasoning_content']);

function messageExtras(m: ChatMessage): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(m)) {
    if (TEXT_FIELDS.has(k) || v === undefined) continue;
    (out ??= {})[k] = v;
  }
  return out;
}

function capContext(text: string): string {
  if (text.length <= CONTEXT_HEAD_CHARS + CONTEXT_TAIL_CHARS) return text;
  return `${text.slice(0, CONTEXT_HEAD_CHARS)}\n…\n${text.slice(-CONTEXT_TAIL_CHARS)}`;
}

/**
 * JSON with sorted keys and undefined dropped: equal values give equal text. Written with an
 * explicit stack rather than recursion, so no nesting depth can overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Pending work, last first: a value to write, or text (separators, closing brackets).
  const items: unknown[] = [value];
  const isText: boolean[] = [false];
  const push = (item: unknown, text: boolean) => {
    items.push(item);
    isText.push(text);
  };
  while (items.length > 0) {
    const item = items.pop();
    if (isText.pop()) {
      out.push(item as string);
    } else if (item === null || typeof item !== 'object') {
      out.push(JSON.stringify(item) ?? 'null');
    } else if (Array.isArray(item)) {
      out.push('[');
      push(']', true);
      for (let i = item.length - 1; i >= 0; i--) {
        push(item[i], false);
        if (i > 0) push(',', true);
      }
    } else {
      const entries = Object.entries(item as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out.push('{');
      push('}', true);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i] as [string, unknown];
        push(v, false);
        push(`${JSON.stringify(k)}:`, true);
        if (i > 0) push(',', true);
      }
    }
  }
  return out.join('');
}

/** Spellings of the same request made equal, so they share a partition. */
function normalizeShapeField(name: string, value: unknown): unknown {
  switch (name) {
    case 'n':
      return value === 1 ? undefined : value;
    case 'stop': {
      const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : undefined;
      return list === undefined || list.length === 0 ? undefined : list;
    }
    case 'response_format':
      return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'text'
        ? undefined
        : value;
    case 'logprobs':
      return value === false ? undefined : value;
    default:
      return value;
  }
}

/**
 * Query, context and partition of a chat request. Undefined when the request has no user
 * message (nothing to key on): such a request is not cached.
 */
export function cacheKeyParts(req: ChatRequest, scope: CacheScope): CacheKeyParts | undefined {
  let last = -1;
  for (let i = req.messages.length - 1; i >= 0; i--) {
    if (req.messages[i]?.role === 'user') {
      last = i;
      break;
    }
  }
  if (last < 0) return undefined;

  const media: unknown[] = [];
  const contextLines: string[] = [];
  const instructions: unknown[] = [];
  const extras: unknown[] = [];
  for (let i = 0; i < last; i++) {
    const m = req.messages[i] as ChatMessage;
    // A different system prompt is a different task: it never shares entries, whatever the
    // context embedding would say (the position among the turns counts too).
    if (INSTRUCTION_ROLES.has(m.role)) instructions.push([i, m.role, m.content ?? null]);
    else contextLines.push(line(m, messageText(m, media)));
    const x = messageExtras(m);
    if (x) extras.push([i, x]);
  }
  const queryMessage = req.messages[last] as ChatMessage;
  const query = messageText(queryMessage, media);
  const queryExtras = messageExtras(queryMessage);
  if (queryExtras) extras.push([last, queryExtras]);
  // Messages after the last user turn (an assistant prefill) shape the answer exactly.
  const tailMedia: unknown[] = [];
  const tail = req.messages.slice(last + 1).map((m) => line(m, messageText(m, tailMedia)));

  // The request's own fields live under `fields`, never beside Gantry's keys: a client field
  // named `instructions`, `media`, `embedder`… must not stand in for the derived value of that
  // name, or one key could plant an answer in another's partition. v 3: entries keyed the old
  // way are never served again.
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(req)) {
    if (IGNORED_FIELDS.has(name)) continue;
    const normalized = normalizeShapeField(name, value);
    if (normalized !== undefined) fields[name] = normalized;
  }
  const shape: Record<string, unknown> = { v: SHAPE_VERSION, embedder: scope.embedder, fields };
  // Text is compared by meaning, but an image is not text: different images never match.
  if (media.length > 0 || tailMedia.length > 0) shape.media = [...media, ...tailMedia];
  if (tail.length > 0) shape.tail = tail;
  if (instructions.length > 0) shape.instructions = instructions;
  if (extras.length > 0) shape.extras = extras;
  // Earlier turns are compared by meaning, but a conversation about 60 kg is not one about
  // 6 kg however close the embeddings: their facts must be equal (lookalike.ts). A long
  // conversation's middle, which the embedding does not see, must be equal outright.
  const context = contextLines.join('\n');
  const capped = capContext(context);
  if (context !== '') shape.contextFacts = factsSignature(extractFacts(capped));
  if (capped !== context)
    shape.contextMiddle = createHash('sha256')
      .update(context.slice(CONTEXT_HEAD_CHARS, context.length - CONTEXT_TAIL_CHARS))
      .digest('base64url');

  const hash = createHash('sha256').update(canonicalJson(shape)).digest('base64url').slice(0, 32);
  return {
    query,
    context: capped,
    partition: partitionKey(scope.tenant, scope.format, hash),
  };
}
