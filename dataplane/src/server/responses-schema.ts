/**
 * Request schemas of /v1/responses and /v1/responses/compact, checked by Fastify's ajv.
 * Item shapes are checked per item type by the translation (formats/responses/to-chat.ts),
 * which names the offending `input[i]...` field; unknown standard fields pass.
 */
import { Type } from '@sinclair/typebox';

const open = { additionalProperties: true } as const;
const Str = Type.String();
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const TokenCount = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const ResponseId = Type.String({ minLength: 1, maxLength: 256 });

const ContentPart = Type.Object({ type: Type.String({ minLength: 1 }) }, open);

const Item = Type.Object(
  {
    type: Type.Optional(Type.String({ minLength: 1 })),
    role: Type.Optional(Type.Union(['user', 'system', 'developer', 'assistant'].map((r) => Type.Literal(r)))),
    content: Type.Optional(Type.Union([Str, Type.Array(ContentPart, { maxItems: 512 })])),
    call_id: Type.Optional(Type.String({ minLength: 1 })),
    name: Type.Optional(Str),
    arguments: Type.Optional(Str),
    output: Type.Optional(Type.Union([Str, Type.Array(ContentPart, { maxItems: 512 })])),
    encrypted_content: Type.Optional(Type.Union([Str, Type.Null()])),
  },
  open,
);

export const ResponsesInput = Type.Union([Str, Type.Array(Item, { maxItems: 4096 })]);

const FunctionTool = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    description: Type.Optional(Type.Union([Str, Type.Null()])),
    parameters: Type.Optional(Type.Union([Type.Object({}, open), Type.Null()])),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  open,
);

const TextFormat = Type.Union([
  Type.Object({ type: Type.Literal('text') }, open),
  Type.Object({ type: Type.Literal('json_object') }, open),
  Type.Object(
    {
      type: Type.Literal('json_schema'),
      name: Type.String({ minLength: 1, maxLength: 64 }),
      schema: Type.Object({}, open),
      description: Type.Optional(Str),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    },
    open,
  ),
]);

export const ResponsesRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(ResponsesInput),
    instructions: Type.Optional(Nullable(Str)),
    previous_response_id: Type.Optional(Nullable(ResponseId)),
    max_output_tokens: Type.Optional(Type.Union([TokenCount, Type.Null()])),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    tools: Type.Optional(Type.Array(FunctionTool, { maxItems: 256 })),
    tool_choice: Type.Optional(
      Type.Union([
        Type.Literal('auto'),
        Type.Literal('none'),
        Type.Literal('required'),
        Type.Object({ type: Type.String({ minLength: 1 }) }, open),
      ]),
    ),
    parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    text: Type.Optional(Type.Union([Type.Object({ format: Type.Optional(TextFormat) }, open), Type.Null()])),
    reasoning: Type.Optional(
      Type.Union([
        Type.Object(
          {
            effort: Type.Optional(
              Type.Union([
                ...['none', 'minimal', 'low', 'medium', 'high', 'xhigh'].map((e) => Type.Literal(e)),
                Type.Null(),
              ]),
            ),
          },
          open,
        ),
        Type.Null(),
      ]),
    ),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    metadata: Type.Optional(
      Type.Union([Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 })), Type.Null()]),
    ),
    user: Type.Optional(Str),
    safety_identifier: Type.Optional(Str),
    truncation: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('disabled'), Type.Null()])),
  },
  open,
);

/** Counting takes what creating takes (output settings are simply not needed). */
export const InputTokensSchema = Type.Object(
  { ...ResponsesRequestSchema.properties, model: Type.String({ minLength: 1, maxLength: 256 }) },
  open,
);

export const CompactRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(ResponsesInput),
    instructions: Type.Optional(Nullable(Str)),
    previous_response_id: Type.Optional(Nullable(ResponseId)),
  },
  open,
);

export const ResponseIdParams = Type.Object({ id: ResponseId });

export const InputItemsQuery = Type.Object(
  {
    // Query values are strings (ajv does not coerce here); the route checks the range.
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  open,
);
