/**
 * The OpenAI Responses API: translated at the edge to the canonical chat request, run through
 * the same pipeline as chat completions (money, guardrails, routing, router; not the semantic
 * cache, which SPEC.md keeps to chat and messages), and translated back. Stored responses
 * belong to the tenant and key that made them; anyone else gets the 404 of an unknown id.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { ChatMessage } from '../../formats/openai/types.ts';
import {
  COMPACTION_PROMPT,
  ResponsesStreamEncoder,
  compactionSealKey,
  assistantTurnOf,
  completionToResponse,
  encodeCompaction,
  itemPage,
  listedItems,
  type ListedItem,
  responsesToChat,
  responsesUsage,
  type ResponseFrame,
  type ResponsesRequest,
} from '../../formats/responses/index.ts';
import { countRefused } from '../../pipeline/admission.ts';
import { admitRead, describeRead, settleRead } from '../../pipeline/read-admission.ts';
import { runChat } from '../../pipeline/chat.ts';
import { accessibleRoute, type RequestContext } from '../../pipeline/context.ts';
import { estimatePromptTokens } from '../../accounting/tokens.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { isStoreUnavailable } from '../../stores/errors.ts';
import type { ResponseOwner, ResponseStore } from '../../stores/responses/types.ts';
import {
  CompactRequestSchema,
  InputItemsQuery,
  InputTokensSchema,
  ResponseIdParams,
  ResponsesRequestSchema,
} from '../responses-schema.ts';
import { DEFAULT_BODY_LIMIT } from '../limits.ts';
import { chainTooLong, historyBytes } from './chained-history.ts';
import { compactedOutput } from './responses-compact.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';
import { replyStored } from './stored-answer.ts';

export function responsesRoute(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  backing: ResponseStore,
  compactionSecret?: Buffer,
): void {
  const store = available(backing);
  const sealKeyOf = (ctx: RequestContext): string =>
    compactionSealKey(
      { tenant: ctx.tenant.name, keyId: ctx.key.id, keyHash: ctx.key.hash.toString('hex') },
      compactionSecret,
    );
  const chainLimit = app.initialConfig.bodyLimit ?? DEFAULT_BODY_LIMIT;
  app.post('/v1/responses', { schema: { body: ResponsesRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as ResponsesRequest;
    const owner = ownerOf(ctx);
    const history = await historyOf(store, owner, body.previous_response_id, chainLimit, () =>
      countRefused(deps.stores, ctx),
    );
    const { chat, conversation } = responsesToChat(body, history, sealKeyOf(ctx));
    const outcome = await runChat(deps, ctx, chat, 'responses').catch((err: unknown) => {
      throw inClientTerms(err);
    });
    const frame: ResponseFrame = {
      id: responseId(),
      createdAt: Math.floor(ctx.startedAt / 1000),
      model: outcome.kind === 'completion' ? outcome.completion.model : outcome.meta.model,
      request: body,
    };
    // The answer is served and charged by now: a store that cannot keep it does not fail it
    // (a later previous_response_id then gets the 404 of an unknown id).
    const keep = async (response: ReturnType<typeof completionToResponse>): Promise<void> => {
      if (body.store === false) return;
      const turn = assistantTurnOf(response.output);
      const stored = {
        response,
        conversation: turn ? [...conversation, turn] : conversation,
        input: listedItems(body.input, response.id),
      };
      await store
        .put(owner, stored)
        .catch((err: unknown) => ctx.log.warn({ err: (err as Error).message }, 'response not stored'));
    };
    return replyStored(request, reply, ctx, hooks, outcome, {
      whole: (o) => completionToResponse(o.completion, frame),
      encoder: () => new ResponsesStreamEncoder(frame),
      keep,
    });
  });

  app.post('/v1/responses/compact', { schema: { body: CompactRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as ResponsesRequest;
    const owner = ownerOf(ctx);
    const history = await historyOf(store, owner, body.previous_response_id);
    // Derived once (an HMAC when there is a compaction secret): it opens the input's compaction
    // items and seals the new summary.
    const sealKey = sealKeyOf(ctx);
    const { chat, conversation } = responsesToChat(
      { model: body.model, input: body.input, instructions: body.instructions },
      history,
      sealKey,
    );
    chat.messages = [...chat.messages, { role: 'user', content: COMPACTION_PROMPT }];
    const outcome = await runChat(deps, ctx, chat, 'responses').catch((err: unknown) => {
      throw inClientTerms(err);
    });
    if (outcome.kind !== 'completion') throw new GatewayError('internal_error', 'compaction cannot stream');
    const summary = outcome.completion.choices[0]?.message.content ?? '';
    const id = responseId();
    replyServedHeaders(reply, ctx, outcome, outcome.costUsd);
    return {
      id,
      object: 'response.compaction',
      created_at: Math.floor(ctx.startedAt / 1000),
      // Half a body for the user messages kept: the summary and the next turn need room too.
      output: compactedOutput(id, conversation, encodeCompaction(summary, sealKey), chainLimit / 2),
      usage: responsesUsage(outcome.usage),
    };
  });

  app.get('/v1/responses/:id', { schema: { params: ResponseIdParams } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    await admitRead(deps, ctx, 'responses');
    const response = await store.getResponse(ownerOf(ctx), idParam(request));
    if (!response) throw notFound(idParam(request));
    await settleRead(deps, ctx);
    reply.headers(ctx.responseHeaders);
    return response;
  });

  app.get(
    '/v1/responses/:id/input_items',
    { schema: { params: ResponseIdParams, querystring: InputItemsQuery } },
    async (request, reply) => {
      const ctx = hooks.context(request, reply);
      const q = request.query as { limit?: string; order?: 'asc' | 'desc'; after?: string };
      const limit = q.limit === undefined ? 20 : Number(q.limit);
      if (limit < 1 || limit > 100) throw invalidParam('limit', 'must be between 1 and 100');
      await admitRead(deps, ctx, 'responses');
      const entry = await store.get(ownerOf(ctx), idParam(request));
      if (!entry) throw notFound(idParam(request));
      await settleRead(deps, ctx);
      reply.headers(ctx.responseHeaders);
      return itemPage((entry.input ?? []) as ListedItem[], {
        limit,
        order: q.order ?? 'desc',
        after: q.after,
      });
    },
  );

  // Counted like admission counts (accounting/tokens.ts); no model is called, nothing is charged.
  // A stored chain is bounded as where a turn is created: one past the body limit could not be
  // continued anyway, and is refused at the cost of its recorded size.
  app.post('/v1/responses/input_tokens', { schema: { body: InputTokensSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as ResponsesRequest;
    describeRead(ctx, 'responses', body.model);
    accessibleRoute(ctx, body.model);
    await admitRead(deps, ctx, 'responses', body.model);
    const owner = ownerOf(ctx);
    const history = await historyOf(store, owner, body.previous_response_id, chainLimit);
    const { chat } = responsesToChat({ ...body, stream: false }, history, sealKeyOf(ctx));
    const counted = estimatePromptTokens(chat);
    await settleRead(deps, ctx);
    reply.headers(ctx.responseHeaders);
    return { object: 'response.input_tokens', input_tokens: counted };
  });

  // Counted like a read: it touches the key's stored data and calls no model.
  app.delete('/v1/responses/:id', { schema: { params: ResponseIdParams } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const id = idParam(request);
    await admitRead(deps, ctx, 'responses');
    if (!(await store.delete(ownerOf(ctx), id))) throw notFound(id);
    await settleRead(deps, ctx);
    reply.headers(ctx.responseHeaders);
    return { id, object: 'response.deleted', deleted: true };
  });
}

/** A store that cannot be reached is a 503 for reads and deletes, not an internal error. */
function available(store: ResponseStore): ResponseStore {
  const wrap =
    <A extends unknown[], R>(op: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      op(...args).catch((err: unknown) => {
        throw isStoreUnavailable(err)
          ? new GatewayError('service_unavailable', 'the response store is unavailable', { cause: err })
          : err;
      });
  return {
    put: wrap(store.put.bind(store)),
    get: wrap(store.get.bind(store)),
    getWithin: wrap(store.getWithin.bind(store)),
    getResponse: wrap(store.getResponse.bind(store)),
    delete: wrap(store.delete.bind(store)),
  };
}

const ownerOf = (ctx: RequestContext): ResponseOwner => ({
  tenant: ctx.tenant.name,
  keyHash: ctx.key.hash.toString('hex'),
});

/** Never the request id: a caller may choose that one (x-request-id) and reuse it. */
const responseId = (): string => `resp_${randomUUID().replaceAll('-', '')}`;

const idParam = (request: FastifyRequest): string => (request.params as { id: string }).id;

/** The same answer for another owner's id as for one that never existed. */
const notFound = (id: string, param?: string): GatewayError =>
  new GatewayError('not_found', `response ${id} not found`, param ? { param } : {});

/**
 * The stored conversation to continue; `limitBytes` bounds it where a turn is created
 * (chained-history.ts). Past the bound only the entry's recorded size is read, and
 * `refused` runs before the refusal is thrown (it counts against the rate limit).
 */
async function historyOf(
  store: ResponseStore,
  owner: ResponseOwner,
  id: string | null | undefined,
  limitBytes = Infinity,
  refused?: () => Promise<void>,
): Promise<ChatMessage[]> {
  if (id === undefined || id === null) return [];
  const entry = await store.getWithin(owner, id, limitBytes);
  if (!entry) throw notFound(id, 'previous_response_id');
  const refuse = async (bytes: number): Promise<GatewayError> => {
    await refused?.();
    return chainTooLong(bytes, limitBytes, 'previous_response_id', id, 'POST /v1/responses/compact');
  };
  if ('oversized' in entry) throw await refuse(entry.conversationBytes);
  // Unbounded (compaction): not even measured. Entries stored before sizes were
  // recorded are measured here.
  const bytes = limitBytes === Infinity ? 0 : (entry.conversationBytes ?? historyBytes(entry.conversation));
  if (bytes > limitBytes) throw await refuse(bytes);
  return entry.conversation;
}

/** Canonical field names in pipeline errors → the Responses fields the client sent. */
const CLIENT_PARAMS: Record<string, string> = {
  max_completion_tokens: 'max_output_tokens',
  max_tokens: 'max_output_tokens',
  response_format: 'text.format',
  reasoning_effort: 'reasoning.effort',
  messages: 'input',
};

function inClientTerms(err: unknown): unknown {
  if (!(err instanceof GatewayError) || err.param === undefined) return err;
  const head = err.param.split(/[.[]/, 1)[0]!;
  const param = CLIENT_PARAMS[head];
  if (param === undefined) return err;
  return new GatewayError(err.type, err.message.replace(err.param, param), {
    param,
    headers: err.headers,
    status: err.status,
    cause: err.cause,
  });
}
