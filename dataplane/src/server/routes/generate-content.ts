import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, invalidParam } from '../../errors.ts';
import { chatToGemini } from '../../formats/gemini/from-chat.ts';
import { GeminiStreamEncoder } from '../../formats/gemini/stream-encoder.ts';
import { geminiToChat, type GeminiEdgeRequest } from '../../formats/gemini/to-chat.ts';
import { runChat } from '../../pipeline/chat.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { checkModelName, shownName } from '../model-name.ts';
import { writeStream } from '../stream-writer.ts';
import { replyServedHeaders, streamHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

const open = { additionalProperties: true } as const;

const Part = Type.Object(
  {
    text: Type.Optional(Type.String()),
    thought: Type.Optional(Type.Boolean()),
    inlineData: Type.Optional(
      Type.Object({ mimeType: Type.String({ minLength: 1 }), data: Type.String() }, open),
    ),
    fileData: Type.Optional(
      Type.Object({ mimeType: Type.Optional(Type.String()), fileUri: Type.String({ minLength: 1 }) }, open),
    ),
    functionCall: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1 }), args: Type.Optional(Type.Object({}, open)) }, open),
    ),
    functionResponse: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1 }), response: Type.Object({}, open) }, open),
    ),
  },
  open,
);

const Content = Type.Object(
  {
    role: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('model')])),
    parts: Type.Array(Part, { minItems: 1 }),
  },
  open,
);

export const GenerateContentSchema = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    contents: Type.Array(Content, { minItems: 1, maxItems: 4096 }),
    systemInstruction: Type.Optional(Type.Object({ parts: Type.Array(Part) }, open)),
    tools: Type.Optional(
      Type.Array(
        Type.Object(
          {
            functionDeclarations: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    name: Type.String({ minLength: 1 }),
                    description: Type.Optional(Type.String()),
                    parameters: Type.Optional(Type.Object({}, open)),
                  },
                  open,
                ),
              ),
            ),
          },
          open,
        ),
      ),
    ),
    toolConfig: Type.Optional(
      Type.Object(
        {
          functionCallingConfig: Type.Object(
            {
              mode: Type.Union([Type.Literal('AUTO'), Type.Literal('ANY'), Type.Literal('NONE')]),
              allowedFunctionNames: Type.Optional(Type.Array(Type.String())),
            },
            open,
          ),
        },
        open,
      ),
    ),
    generationConfig: Type.Optional(
      Type.Object(
        {
          temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
          topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          topK: Type.Optional(Type.Integer({ minimum: 1 })),
          maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
          candidateCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 8 })),
          stopSequences: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
          presencePenalty: Type.Optional(Type.Number()),
          frequencyPenalty: Type.Optional(Type.Number()),
          seed: Type.Optional(Type.Integer()),
          responseMimeType: Type.Optional(Type.String()),
          responseSchema: Type.Optional(Type.Object({}, open)),
          thinkingConfig: Type.Optional(
            Type.Object({ thinkingBudget: Type.Optional(Type.Integer({ minimum: -1 })) }, open),
          ),
        },
        open,
      ),
    ),
  },
  open,
);

/** `models/gemini-2.5-flash` (Gemini's resource name) and `gemini-2.5-flash` mean the same model. */
const modelName = (raw: string): string => raw.replace(/^models\//, '');

type Method = 'generateContent' | 'streamGenerateContent';

const Query = Type.Object(
  { model: Type.Optional(Type.String({ minLength: 1 })), alt: Type.Optional(Type.String()) },
  open,
);

/** `gemini-2.5-flash:streamGenerateContent` → the model and the method Gemini's path names. */
export function modelAction(target: string): { model: string; method: Method } {
  const at = target.lastIndexOf(':');
  const method = at === -1 ? '' : target.slice(at + 1);
  if (method !== 'generateContent' && method !== 'streamGenerateContent')
    throw new GatewayError(
      'not_found',
      `no route POST /v1/models/${shownName(target)}: the path must end in :generateContent or :streamGenerateContent`,
    );
  return { model: target.slice(0, at), method };
}

/**
 * Gemini generateContent in, any provider out: the model comes from the path, the body or
 * `?model=`, the body is translated to the canonical request, run through the chat pipeline
 * (guardrails, routing, money; not the semantic cache, which SPEC.md keeps to chat and
 * Messages) and answered in Gemini's response shape. streamGenerateContent answers with
 * `?alt=sse` events, the only streaming form Google's SDKs ask for.
 */
export function generateContentRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  const serve = async (
    request: FastifyRequest,
    reply: FastifyReply,
    method: Method,
    pathModel: string | undefined,
  ) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as GeminiEdgeRequest;
    const query = request.query as { model?: string; alt?: string };
    const stream = method === 'streamGenerateContent';
    if (stream && query.alt !== 'sse')
      throw invalidParam('alt', 'streamGenerateContent answers Server-Sent Events only: add ?alt=sse');
    const raw = pathModel ?? body.model ?? query.model;
    if (raw === undefined) throw invalidParam('model', 'required in the body or as ?model=');
    const translated = geminiToChat(body, modelName(raw));
    const chat = stream
      ? { ...translated, stream: true, stream_options: { include_usage: true } }
      : translated;
    const outcome = await runChat(deps, ctx, chat, 'generate_content');
    if (outcome.kind === 'completion') {
      replyServedHeaders(reply, ctx, outcome, outcome.costUsd);
      return chatToGemini(outcome.completion, outcome.usage);
    }
    reply.hijack();
    const result = await writeStream(
      reply.raw,
      streamHeaders(ctx, outcome),
      new GeminiStreamEncoder(outcome.meta),
      outcome.chunks,
      outcome.settle,
      hooks.shutdown,
    );
    await hooks.streamed(request, result);
    return reply;
  };
  const schema = { body: GenerateContentSchema, querystring: Query };
  app.post('/v1/generateContent', { schema }, (request, reply) =>
    serve(request, reply, 'generateContent', undefined),
  );
  app.post('/v1/streamGenerateContent', { schema }, (request, reply) =>
    serve(request, reply, 'streamGenerateContent', undefined),
  );
  // Gemini's own path: the model and the method in one segment, `models/{model}:{method}`.
  // A wildcard, not a router parameter: the router cuts parameters at its maxParamLength with
  // a 414, where a model name is bounded (MAX_MODEL_NAME_CHARS) with the body field's 400.
  // The wildcard also takes a model id holding a slash, raw or encoded, as GET /v1/models/* does.
  const target = (request: FastifyRequest): string => (request.params as { '*': string })['*'];
  app.post(
    '/v1/models/*',
    {
      schema,
      // The label this route had as `/v1/models/:target`, apart from GET /v1/models/* (a lookup).
      config: { metricsRoute: '/v1/models/:target' },
      // Before the body is validated: a path naming no method, or an oversized name, is the answer.
      preValidation: async (request) => checkModelName('model', modelAction(target(request)).model),
    },
    (request, reply) => {
      const { model, method } = modelAction(target(request));
      return serve(request, reply, method, model);
    },
  );
}
