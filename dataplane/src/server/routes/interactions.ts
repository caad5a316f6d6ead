/**
 * The Gemini Interactions API (`POST /v1/interactions`, `GET|DELETE /v1/interactions/{id}`):
 * translated at the edge to the canonical chat request and run through the same pipeline
 * as chat (money, guardrails, routing, compression; not the semantic cache, which SPEC.md
 * keeps to chat and messages), for any provider. Stored interactions (`store`, default true)
 * belong to the tenant and key that made them; anyone else gets the 404 of an unknown id.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../errors.ts';
import type { ChatMessage } from '../../formats/openai/types.ts';
import {
  completionToInteraction,
  interactionsToChat,
  InteractionsStreamEncoder,
  modelTurn,
  type Interaction,
  type InteractionFrame,
  type InteractionsRequest,
} from '../../formats/interactions/index.ts';
import { runChat } from '../../pipeline/chat.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import type { Owner, OwnedStore } from '../../stores/owned/types.ts';
import { withSizeHead } from '../../stores/size-head.ts';
import { DEFAULT_BODY_LIMIT } from '../limits.ts';
import { countRefused } from '../../pipeline/admission.ts';
import { admitRead, settleRead } from '../../pipeline/read-admission.ts';
import { chainTooLong, historyBytes } from './chained-history.ts';
import type { RouteHooks } from './hooks.ts';
import { replyStored } from './stored-answer.ts';

/** Stored with its conversation's size at its head (stores/size-head.ts). */
export interface StoredInteraction {
  /** Bytes of `conversation` as JSON; absent on interactions stored before it was recorded. */
  conversationBytes?: number;
  interaction: Interaction;
  /** The conversation up to and including this interaction's model turn, in chat form. */
  conversation: ChatMessage[];
}

const open = { additionalProperties: true } as const;
const Content = Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, open);
const Turn = Type.Object(
  {
    role: Type.String(),
    content: Type.Union([Type.String(), Type.Array(Content, { maxItems: 512 })]),
  },
  open,
);
const InteractionId = Type.String({ minLength: 1, maxLength: 256 });

export const InteractionsRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Union([
      Type.String(),
      Type.Array(Type.Union([Turn, Content]), { minItems: 1, maxItems: 4096 }),
    ]),
    system_instruction: Type.Optional(Type.String()),
    previous_interaction_id: Type.Optional(InteractionId),
    tools: Type.Optional(Type.Array(Type.Object({ type: Type.String() }, open), { maxItems: 128 })),
    generation_config: Type.Optional(
      Type.Object(
        {
          temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
          top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
          stop_sequences: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
          seed: Type.Optional(Type.Integer()),
          thinking_level: Type.Optional(Type.String()),
        },
        open,
      ),
    ),
    response_format: Type.Optional(Type.Object({}, open)),
    response_mime_type: Type.Optional(Type.String()),
    stream: Type.Optional(Type.Boolean()),
    store: Type.Optional(Type.Boolean()),
    background: Type.Optional(Type.Boolean()),
    agent: Type.Optional(Type.String()),
  },
  // Unknown fields are refused by name in the translation (formats/interactions/to-chat.ts).
  open,
);

const IdParams = Type.Object({ id: InteractionId });

const ownerOf = (ctx: RequestContext): Owner => ({ tenant: ctx.tenant.name, keyId: ctx.key.id });

/** Never the request id: a caller may choose that one (x-request-id) and reuse it. */
const interactionId = (): string => `int_${randomUUID().replaceAll('-', '')}`;

const notFound = (id: string, param?: string): GatewayError =>
  new GatewayError('not_found', `interaction ${id} not found`, param ? { param } : {});

export function interactionsRoute(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  store: OwnedStore<StoredInteraction>,
): void {
  const chainLimit = app.initialConfig.bodyLimit ?? DEFAULT_BODY_LIMIT;
  app.post('/v1/interactions', { schema: { body: InteractionsRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as InteractionsRequest;
    const owner = ownerOf(ctx);
    let history: ChatMessage[] = [];
    if (body.previous_interaction_id !== undefined) {
      const id = body.previous_interaction_id;
      const prev = await store.getWithin(owner, id, chainLimit);
      if (!prev) throw notFound(id, 'previous_interaction_id');
      const refuse = async (bytes: number): Promise<GatewayError> => {
        // Counted like the Responses refusal (pipeline/admission.ts): no faster than answers.
        await countRefused(deps.stores, ctx);
        return chainTooLong(bytes, chainLimit, 'previous_interaction_id', id);
      };
      // Past the bound only the recorded size was read. Within it the recorded size is used,
      // not the history serialised again; interactions stored before it was recorded are measured.
      if ('oversized' in prev) throw await refuse(prev.conversationBytes);
      const bytes = prev.conversationBytes ?? historyBytes(prev.conversation);
      if (bytes > chainLimit) throw await refuse(bytes);
      history = prev.conversation;
    }
    const { chat, conversation } = interactionsToChat(body, history);
    const outcome = await runChat(deps, ctx, chat, 'interactions');
    const frame: InteractionFrame = {
      id: interactionId(),
      model: body.model,
      createdAt: ctx.startedAt,
      previousId: body.previous_interaction_id,
    };
    // Served and charged by now: a store that cannot keep it does not fail the answer.
    const keep = async (interaction: Interaction): Promise<void> => {
      if (body.store === false) return;
      const turn = modelTurn(interaction.outputs);
      await store
        .putJson(
          owner,
          interaction.id,
          withSizeHead({ interaction }, turn ? [...conversation, turn] : conversation),
        )
        .catch((err: unknown) => ctx.log.warn({ err: (err as Error).message }, 'interaction not stored'));
    };
    return replyStored(request, reply, ctx, hooks, outcome, {
      whole: (o) => completionToInteraction(o.completion, o.usage, frame),
      encoder: () => new InteractionsStreamEncoder(frame),
      keep,
    });
  });

  // Reads and deletions call no model but load the key's stored data: they count against its
  // request rate before the lookup (an unknown id too) and are recorded at no cost.
  app.get('/v1/interactions/:id', { schema: { params: IdParams } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const id = (request.params as { id: string }).id;
    await admitRead(deps, ctx, 'interactions');
    const entry = await store.get(ownerOf(ctx), id);
    if (!entry) throw notFound(id);
    await settleRead(deps, ctx);
    reply.headers(ctx.responseHeaders);
    return entry.interaction;
  });

  app.delete('/v1/interactions/:id', { schema: { params: IdParams } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const id = (request.params as { id: string }).id;
    await admitRead(deps, ctx, 'interactions');
    if (!(await store.delete(ownerOf(ctx), id))) throw notFound(id);
    await settleRead(deps, ctx);
    reply.headers(ctx.responseHeaders);
    // Google's API answers a deletion with an empty object.
    return {};
  });
}
