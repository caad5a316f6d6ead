/** Anthropic Messages: POST /v1/messages (JSON and SSE) and /v1/messages/count_tokens. */
import { asString, plan, promptTokens, randomId, splitFixed, splitWords } from './behaviour.ts';
import { anthropicError, anthropicErrors } from './anthropic-errors.ts';
import { readAnthropicConversation, validateAnthropic } from './anthropic-read.ts';
import type { Frame, Outcome, Reply, Route, RouteContext } from './types.ts';

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function contentOf(reply: Reply): Record<string, unknown>[] {
  if (reply.kind === 'tool')
    return [{ type: 'tool_use', id: randomId('toolu_01'), name: reply.name, input: reply.args }];
  return reply.text === '' ? [] : [{ type: 'text', text: reply.text }];
}

function stopReason(reply: Reply): string {
  if (reply.cut) return 'max_tokens';
  return reply.kind === 'tool' ? 'tool_use' : 'end_turn';
}

function messageJson(reply: Reply, model: string, usage: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: randomId('msg_01'),
    type: 'message',
    role: 'assistant',
    model,
    content: contentOf(reply),
    stop_reason: stopReason(reply),
    stop_sequence: null,
  };
  if (usage) {
    out.usage = {
      input_tokens: reply.promptTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: reply.completionTokens,
      service_tier: 'standard',
    };
  }
  return out;
}

function messageFrames(reply: Reply, model: string, usage: boolean): Frame[] {
  const message: Record<string, unknown> = {
    id: randomId('msg_01'),
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  // Like the real API, message_start reports a provisional output count; message_delta has the final one.
  if (usage) {
    message.usage = {
      input_tokens: reply.promptTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 1,
    };
  }
  const frames: Frame[] = [{ role: 'pre', data: sse('message_start', { type: 'message_start', message }) }];
  const block =
    reply.kind === 'tool'
      ? { type: 'tool_use', id: randomId('toolu_01'), name: reply.name, input: {} }
      : { type: 'text', text: '' };
  frames.push({
    role: 'pre',
    data: sse('content_block_start', { type: 'content_block_start', index: 0, content_block: block }),
  });
  frames.push({ role: 'pre', data: sse('ping', { type: 'ping' }) });
  const deltas =
    reply.kind === 'tool'
      ? splitFixed(reply.argsJson).map((partial_json) => ({ type: 'input_json_delta', partial_json }))
      : splitWords(reply.text).map((text) => ({ type: 'text_delta', text }));
  for (const delta of deltas) {
    frames.push({
      role: 'content',
      data: sse('content_block_delta', { type: 'content_block_delta', index: 0, delta }),
    });
  }
  frames.push({ role: 'post', data: sse('content_block_stop', { type: 'content_block_stop', index: 0 }) });
  const messageDelta: Record<string, unknown> = {
    type: 'message_delta',
    delta: { stop_reason: stopReason(reply), stop_sequence: null },
  };
  if (usage) messageDelta.usage = { output_tokens: reply.completionTokens };
  frames.push({ role: 'post', data: sse('message_delta', messageDelta) });
  frames.push({ role: 'end', data: sse('message_stop', { type: 'message_stop' }) });
  return frames;
}

const GARBAGE =
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n';

function answer(ctx: RouteContext, usage: boolean): Outcome {
  const reply = plan(readAnthropicConversation(ctx.body));
  const model = asString(ctx.body.model) ?? '';
  const headers = { 'request-id': randomId('req_011', 21) };
  if (ctx.body.stream !== true) return { kind: 'json', body: messageJson(reply, model, usage), headers };
  return {
    kind: 'stream',
    contentType: 'text/event-stream; charset=utf-8',
    frames: messageFrames(reply, model, usage),
    garbage: GARBAGE,
    headers,
  };
}

/** `x-api-key`, or `Authorization: Bearer` (what current official SDKs send for an API key). */
function authorized(ctx: Omit<RouteContext, 'body'>): boolean {
  const key = ctx.headers['x-api-key'];
  if (typeof key === 'string' && key.trim() !== '') return true;
  return /^Bearer\s+\S+/i.test(ctx.headers.authorization ?? '');
}

function versionMissing(ctx: RouteContext): ReturnType<NonNullable<Route['validate']>> {
  if (ctx.headers['anthropic-version']) return undefined;
  return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
}

const messagesRoute: Route = {
  errors: anthropicErrors,
  authorized,
  validate: (ctx) => versionMissing(ctx) ?? validateAnthropic(ctx.body, true),
  describe: (ctx) => ({ model: asString(ctx.body.model), stream: ctx.body.stream === true }),
  answer: (ctx, { usage }) => answer(ctx, usage),
};

const countTokensRoute: Route = {
  errors: anthropicErrors,
  authorized,
  validate: (ctx) => versionMissing(ctx) ?? validateAnthropic(ctx.body, false),
  describe: (ctx) => ({ model: asString(ctx.body.model), stream: false }),
  answer: (ctx) => {
    const conv = readAnthropicConversation(ctx.body);
    return { kind: 'json', body: { input_tokens: promptTokens(conv.promptChars, conv.images) } };
  },
};

export function anthropicRoute(method: string, pathname: string): Route | undefined {
  if (method !== 'POST') return undefined;
  if (pathname.endsWith('/messages/count_tokens')) return countTokensRoute;
  if (pathname.endsWith('/messages')) return messagesRoute;
  return undefined;
}
