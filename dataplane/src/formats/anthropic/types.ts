/**
 * Anthropic Messages API wire shapes (anthropic-version 2023-06-01). The request is a TypeBox
 * schema because it is a boundary: `POST /v1/messages` validates client bodies with it, and
 * the provider adapter builds the same shape for upstream calls. Responses and stream events
 * are plain types because Gantry only produces or reads them, never validates them.
 *
 * Objects are open (unknown keys allowed): Anthropic adds fields often, and an unknown key
 * is not a reason to reject a client.
 */
import { Type, type Static } from '@sinclair/typebox';

const CacheControl = Type.Object({ type: Type.Literal('ephemeral'), ttl: Type.Optional(Type.String()) });
export type AnthropicCacheControl = Static<typeof CacheControl>;

export const AnthropicTextBlock = Type.Object({
  type: Type.Literal('text'),
  text: Type.String(),
  cache_control: Type.Optional(Type.Union([CacheControl, Type.Null()])),
  citations: Type.Optional(Type.Union([Type.Array(Type.Unknown()), Type.Null()])),
});
export type AnthropicTextBlock = Static<typeof AnthropicTextBlock>;

const Base64Source = Type.Object({
  type: Type.Literal('base64'),
  media_type: Type.String(),
  data: Type.String(),
});
const UrlSource = Type.Object({ type: Type.Literal('url'), url: Type.String() });
const FileSource = Type.Object({ type: Type.Literal('file'), file_id: Type.String() });

export const AnthropicImageBlock = Type.Object({
  type: Type.Literal('image'),
  source: Type.Union([Base64Source, UrlSource, FileSource]),
  cache_control: Type.Optional(Type.Union([CacheControl, Type.Null()])),
});
export type AnthropicImageBlock = Static<typeof AnthropicImageBlock>;

const TextSource = Type.Object({
  type: Type.Literal('text'),
  media_type: Type.String(),
  data: Type.String(),
});
const ContentSource = Type.Object({
  type: Type.Literal('content'),
  content: Type.Union([Type.String(), Type.Array(Type.Unknown())]),
});

export const AnthropicDocumentBlock = Type.Object({
  type: Type.Literal('document'),
  source: Type.Union([Base64Source, UrlSource, TextSource, ContentSource, FileSource]),
  title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  context: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  citations: Type.Optional(
    Type.Union([Type.Object({ enabled: Type.Optional(Type.Boolean()) }), Type.Null()]),
  ),
  cache_control: Type.Optional(Type.Union([CacheControl, Type.Null()])),
});
export type AnthropicDocumentBlock = Static<typeof AnthropicDocumentBlock>;

export const AnthropicToolUseBlock = Type.Object({
  type: Type.Literal('tool_use'),
  id: Type.String(),
  name: Type.String(),
  input: Type.Unknown(),
  cache_control: Type.Optional(Type.Union([CacheControl, Type.Null()])),
});
export type AnthropicToolUseBlock = Static<typeof AnthropicToolUseBlock>;

export const AnthropicToolResultBlock = Type.Object({
  type: Type.Literal('tool_result'),
  tool_use_id: Type.String(),
  content: Type.Optional(
    Type.Union([
      Type.String(),
      Type.Array(Type.Union([AnthropicTextBlock, AnthropicImageBlock, AnthropicDocumentBlock])),
    ]),
  ),
  is_error: Type.Optional(Type.Boolean()),
  cache_control: Type.Optional(Type.Union([CacheControl, Type.Null()])),
});
export type AnthropicToolResultBlock = Static<typeof AnthropicToolResultBlock>;

export const AnthropicThinkingBlock = Type.Object({
  type: Type.Literal('thinking'),
  thinking: Type.String(),
  signature: Type.String(),
});
export type AnthropicThinkingBlock = Static<typeof AnthropicThinkingBlock>;

export const AnthropicRedactedThinkingBlock = Type.Object({
  type: Type.Literal('redacted_thinking'),
  data: Type.String(),
});
export type AnthropicRedactedThinkingBlock = Static<typeof AnthropicRedactedThinkingBlock>;

export const AnthropicContentBlockParam = Type.Union([
  AnthropicTextBlock,
  AnthropicImageBlock,
  AnthropicDocumentBlock,
  AnthropicToolUseBlock,
  AnthropicToolResultBlock,
  AnthropicThinkingBlock,
  AnthropicRedactedThinkingBlock,
]);
export type AnthropicContentBlockParam = Static<typeof AnthropicContentBlockParam>;

export const AnthropicMessageParam = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Union([Type.String(), Type.Array(AnthropicContentBlockParam)]),
});
export type AnthropicMessageParam = Static<typeof AnthropicMessageParam>;

export const AnthropicTool = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  /** Absent only on Anthropic server tools (`type: web_search_...`), which Gantry refuses. */
  input_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  type: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  cache_control: Type.Optional(Type.Union([CacheControl, Type.Null()])),
});
export type AnthropicTool = Static<typeof AnthropicTool>;

const DisableParallel = { disable_parallel_tool_use: Type.Optional(Type.Boolean()) };
export const AnthropicToolChoice = Type.Union([
  Type.Object({ type: Type.Literal('auto'), ...DisableParallel }),
  Type.Object({ type: Type.Literal('any'), ...DisableParallel }),
  Type.Object({ type: Type.Literal('tool'), name: Type.String(), ...DisableParallel }),
  Type.Object({ type: Type.Literal('none') }),
]);
export type AnthropicToolChoice = Static<typeof AnthropicToolChoice>;

export const AnthropicThinkingConfig = Type.Union([
  Type.Object({
    type: Type.Literal('enabled'),
    budget_tokens: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  }),
  Type.Object({ type: Type.Literal('disabled') }),
  Type.Object({ type: Type.Literal('adaptive') }),
]);
export type AnthropicThinkingConfig = Static<typeof AnthropicThinkingConfig>;

/** Anthropic structured output: a JSON schema the answer must satisfy. */
const StructuredOutputFormat = Type.Object({
  type: Type.Literal('json_schema'),
  schema: Type.Record(Type.String(), Type.Unknown()),
});

export const AnthropicMessagesRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  // A safe integer: the budget estimate multiplies it (1e20 is a 400 naming the field).
  max_tokens: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  messages: Type.Array(AnthropicMessageParam, { minItems: 1 }),
  system: Type.Optional(Type.Union([Type.String(), Type.Array(AnthropicTextBlock)])),
  stop_sequences: Type.Optional(Type.Array(Type.String())),
  stream: Type.Optional(Type.Boolean()),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  top_k: Type.Optional(Type.Integer({ minimum: 0 })),
  tools: Type.Optional(Type.Array(AnthropicTool)),
  tool_choice: Type.Optional(AnthropicToolChoice),
  thinking: Type.Optional(AnthropicThinkingConfig),
  metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Type.Union([Type.String(), Type.Null()])) })),
  /** Newer API: effort for adaptive thinking. Read only to derive a reasoning effort. */
  output_config: Type.Optional(
    Type.Object({
      effort: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      format: Type.Optional(Type.Union([StructuredOutputFormat, Type.Null()])),
    }),
  ),
  // Carried to Anthropic upstreams verbatim (native.ts); checked here only as far as the
  // translation for other providers reads them.
  output_format: Type.Optional(Type.Union([StructuredOutputFormat, Type.Null()])),
  mcp_servers: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
  service_tier: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('standard_only')])),
  container: Type.Optional(
    Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  ),
});
export type AnthropicMessagesRequest = Static<typeof AnthropicMessagesRequest>;

// ---- Responses (produced by Gantry for /v1/messages, read from Anthropic upstream) ----

export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

export interface AnthropicResponseTextBlock {
  type: 'text';
  text: string;
  citations?: unknown[] | null;
}
export interface AnthropicResponseToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}
/** Blocks Gantry does not translate (server tool results, ...) keep their raw shape. */
export interface AnthropicUnknownBlock {
  type: string;
  [key: string]: unknown;
}
export type AnthropicResponseBlock =
  | AnthropicResponseTextBlock
  | AnthropicResponseToolUseBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** Anthropic error types (api/errors); 529 is overloaded_error. */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
}

// ---- Stream events ----

export type AnthropicStreamDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation: unknown };

export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | {
      type: 'content_block_start';
      index: number;
      content_block: AnthropicResponseBlock | AnthropicUnknownBlock;
    }
  | { type: 'content_block_delta'; index: number; delta: AnthropicStreamDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null };
      usage: Partial<AnthropicUsage> & { output_tokens: number };
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

// ---- Extensions Gantry carries on canonical (OpenAI-shaped) objects ----
//
// The canonical format cannot express a few Anthropic features whose loss would break an
// Anthropic client talking to an Anthropic deployment through Gantry (thinking signatures
// are mandatory when tool use continues with thinking on; cache_control decides the bill).
// They ride along as extra keys, named as other OpenAI-compatible gateways name them.
// Adapters of other providers must strip them before sending upstream.

/** Assistant message (request and response) and stream delta: thinking with signatures. */
export type ThinkingBlocks = (AnthropicThinkingBlock | AnthropicRedactedThinkingBlock)[];

export interface CanonicalExtensions {
  /** On assistant messages and on `choices[].message`: Anthropic thinking blocks verbatim. */
  thinking_blocks?: ThinkingBlocks;
  /** On content parts, tool definitions and tool messages: Anthropic prompt caching marker. */
  cache_control?: AnthropicCacheControl;
  /** On tool messages: the tool reported failure (Anthropic `is_error`). */
  is_error?: boolean;
}

/** Stream-only extension on `choices[].delta`: a thinking block's signature arrived. */
export interface DeltaExtensions {
  reasoning_signature?: string;
  thinking_blocks?: ThinkingBlocks;
}
