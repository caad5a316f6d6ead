/**
 * Request schemas, checked once at the edge by Fastify's ajv. Unknown fields are allowed
 * and passed through: standard OpenAI parameters Gantry does not act on reach the provider.
 */
import { Type } from '@sinclair/typebox';
import { MAX_MODEL_NAME_CHARS } from './model-name.ts';

const open = { additionalProperties: true } as const;
const Str = Type.String();

/**
 * Token counts the budget estimate multiplies: positive safe integers, so `1e20` or `2**53 + 1`
 * is a 400 naming the field rather than a number no store can hold.
 */
const TokenCount = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
/** OpenAI's own bounds on choices per prompt (`n`) and legacy server-side candidates (`best_of`). */
export const MAX_CHOICES = 128;
export const MAX_BEST_OF = 20;
/** Token ids are vocabulary indexes; one input array is bounded like the string inputs are. */
const TokenIds = Type.Array(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }), {
  minItems: 1,
  maxItems: 1_000_000,
});

const ContentPart = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    text: Type.Optional(Str),
    image_url: Type.Optional(
      Type.Object(
        {
          url: Type.String({ minLength: 1 }),
          detail: Type.Optional(
            Type.Union([Type.Literal('low'), Type.Literal('high'), Type.Literal('auto')]),
          ),
        },
        open,
      ),
    ),
  },
  open,
);

const Message = Type.Object(
  {
    role: Type.Union(['system', 'developer', 'user', 'assistant', 'tool'].map((r) => Type.Literal(r))),
    content: Type.Optional(Type.Union([Str, Type.Array(ContentPart, { maxItems: 512 }), Type.Null()])),
    name: Type.Optional(Str),
    tool_call_id: Type.Optional(Str),
    tool_calls: Type.Optional(
      Type.Array(
        Type.Object(
          { id: Str, type: Type.Optional(Str), function: Type.Object({ name: Str, arguments: Str }, open) },
          open,
        ),
        { maxItems: 256 },
      ),
    ),
  },
  open,
);

const Tool = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 64 }),
        description: Type.Optional(Str),
        parameters: Type.Optional(Type.Object({}, open)),
      },
      open,
    ),
  },
  open,
);

export const ChatRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: MAX_MODEL_NAME_CHARS }),
    messages: Type.Array(Message, { minItems: 1, maxItems: 4096 }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    max_tokens: Type.Optional(TokenCount),
    max_completion_tokens: Type.Optional(TokenCount),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CHOICES })),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, open)),
    stop: Type.Optional(Type.Union([Str, Type.Array(Str, { maxItems: 16 }), Type.Null()])),
    tools: Type.Optional(Type.Array(Tool, { maxItems: 256 })),
    tool_choice: Type.Optional(
      Type.Union([
        Type.Literal('auto'),
        Type.Literal('none'),
        Type.Literal('required'),
        Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Str }, open) }, open),
      ]),
    ),
    response_format: Type.Optional(Type.Object({ type: Type.String({ minLength: 1 }) }, open)),
    // A string, as OpenAI takes it; it also keeps end users apart in context recovery.
    safety_identifier: Type.Optional(Str),
    metadata: Type.Optional(
      Type.Union([
        Type.Object(
          {
            // SPEC.md says boolean; OpenAI SDKs type metadata values as strings, so "true"/"false" too.
            cache_bypass: Type.Optional(
              Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')]),
            ),
          },
          open,
        ),
        Type.Null(),
      ]),
    ),
  },
  open,
);

export const EmbeddingRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: MAX_MODEL_NAME_CHARS }),
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1, maxItems: 2048 }),
      TokenIds,
      Type.Array(TokenIds, { minItems: 1, maxItems: 2048 }),
    ]),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    user: Type.Optional(Str),
  },
  open,
);

export const CompletionRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: MAX_MODEL_NAME_CHARS }),
    prompt: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 2048 })]),
    max_tokens: Type.Optional(TokenCount),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CHOICES })),
    best_of: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BEST_OF })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    stream: Type.Optional(Type.Boolean()),
  },
  open,
);
