/**
 * `POST /v1/rag/query`: the question is embedded with the index's embedding model (its own
 * metered call, recorded as `<request id>:embedding`), the caller's own index is searched
 * for the top_k chunks, and a chat completion is run through the normal pipeline
 * (guardrails, routing, money) with those chunks as numbered context. The answer comes back
 * with the cited chunks (streamed: on the first chunk); the charge is both calls'.
 */
import { GatewayError, invalidParam } from '../../errors.ts';
import type { ChatCompletion, ChatMessage, ChatRequest } from '../../formats/openai/types.ts';
import { unitVector } from '../../stores/rag/similarity.ts';
import type { ChunkHit, RagIndexStore } from '../../stores/rag/types.ts';
import type { ChatOutcome, Served } from '../chat.ts';
import { runChat } from '../chat.ts';
import { freshMetering, type RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { embedTexts } from './embed.ts';
import { ownerOf } from './ingest.ts';
import { contextMessage } from './prompt.ts';

export const MAX_TOP_K = 50;
export const DEFAULT_TOP_K = 5;

export interface QueryRequest {
  model: string;
  index: string;
  /** The conversation; its last user message is the question. */
  messages: ChatMessage[];
  topK: number;
  /** Chat fields passed through (max_tokens, temperature, ...). */
  extra: Partial<ChatRequest>;
  stream: boolean;
}

export interface Citation {
  /** The `[n]` the answer cites. */
  source: number;
  document_id: string;
  filename: string;
  chunk_index: number;
  score: number;
  text: string;
}

export type QueryResult =
  | (Served & {
      kind: 'completion';
      response: ChatCompletion & { object: 'chat.completion'; citations: Citation[]; index: string };
      costUsd: number;
    })
  | (Served & {
      kind: 'stream';
      /** The chat stream; its settlement covers the answer only. */
      outcome: Extract<ChatOutcome, { kind: 'stream' }>;
      citations: Citation[];
      /** What the question's embedding cost (settled already), to add to the stream's charge. */
      embeddingCostUsd: number;
    });

export function topKOf(v: unknown): number {
  if (v === undefined) return DEFAULT_TOP_K;
  if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > MAX_TOP_K)
    throw invalidParam('top_k', `must be a whole number from 1 to ${MAX_TOP_K}`);
  return v as number;
}

/** The text of the last user message: what is embedded and searched for. */
export function questionOf(messages: readonly ChatMessage[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const c = last?.content;
  const text =
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? c.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join(' ')
        : '';
  if (text.trim() === '') throw invalidParam('messages', 'needs a user message with text: the question');
  return text;
}

/** A separate context for the embedding call: its own admission, settlement and usage record. */
function embeddingContext(ctx: RequestContext): RequestContext {
  return { ...ctx, ...freshMetering(), id: `${ctx.id}:embedding` };
}

export const citationsOf = (hits: readonly ChunkHit[]): Citation[] =>
  hits.map((h, i) => ({
    source: i + 1,
    document_id: h.chunk.documentId,
    filename: h.chunk.filename,
    chunk_index: h.chunk.chunkIndex,
    score: Math.round(h.score * 1e6) / 1e6,
    text: h.chunk.text,
  }));

export async function runQuery(
  deps: PipelineDeps,
  ctx: RequestContext,
  store: RagIndexStore,
  req: QueryRequest,
): Promise<QueryResult> {
  Object.assign(ctx.usage, { endpoint: 'rag.query', requestedModel: req.model, stream: false });
  const owner = ownerOf(ctx);
  const info = await store.info(owner, req.index);
  if (!info) throw new GatewayError('not_found', `index ${req.index} not found`, { param: 'index' });
  const question = questionOf(req.messages);
  const embedded = await embedTexts(
    deps,
    embeddingContext(ctx),
    info.embeddingModel,
    [question],
    'rag.query',
  );
  const hits = await store.search(owner, req.index, unitVector(embedded.vectors[0]!), req.topK);
  const chat: ChatRequest = {
    ...req.extra,
    model: req.model,
    messages: [
      {
        role: 'system',
        content: contextMessage(hits.map((h) => ({ filename: h.chunk.filename, text: h.chunk.text }))),
      },
      ...req.messages,
    ],
    ...(req.stream ? { stream: true, stream_options: { include_usage: true } } : { stream: false }),
  };
  ctx.usage.stream = req.stream;
  const outcome = await runChat(deps, ctx, chat, 'rag.query');
  const citations = citationsOf(hits);
  if (outcome.kind === 'stream')
    return {
      kind: 'stream',
      outcome,
      citations,
      embeddingCostUsd: embedded.costUsd,
      deployment: outcome.deployment,
      log: outcome.log,
    };
  return {
    kind: 'completion',
    response: { ...outcome.completion, object: 'chat.completion', citations, index: req.index },
    costUsd: embedded.costUsd + outcome.costUsd,
    deployment: outcome.deployment,
    log: outcome.log,
  };
}
