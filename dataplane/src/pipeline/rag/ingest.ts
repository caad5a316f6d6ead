/**
 * `POST /v1/rag/ingest`: a text document is checked by the tenant's guardrails (a secret is
 * refused, PII redacted before it is stored), chunked, embedded with the embedding model
 * the caller names, and added to the caller's own index. The first document of an index
 * fixes its embedding model; later ones must use the same (queries embed with it).
 */
import { randomUUID } from 'node:crypto';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import type { Owner } from '../../stores/owned/types.ts';
import { unitVector } from '../../stores/rag/similarity.ts';
import {
  RagIndexFull,
  RagModelMismatch,
  RagStorageFull,
  type IndexInfo,
  type RagIndexStore,
  type RoomHold,
} from '../../stores/rag/types.ts';
import type { Served } from '../chat.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { guardRequest } from '../guardrails/stage.ts';
import { chunkText, type ChunkOptions } from './chunk.ts';
import { embedTexts, type Embedded } from './embed.ts';

export interface IngestRequest {
  embeddingModel: string;
  index: string;
  filename: string;
  text: string;
  chunking: ChunkOptions;
}

export interface IngestResult {
  response: {
    object: 'rag.ingest';
    id: string;
    index: string;
    filename: string;
    chunks: number;
    embedding_model: string;
    index_chunks: number;
    index_documents: number;
    usage: { prompt_tokens: number; total_tokens: number };
  };
  costUsd: number;
}

export type IngestOutcome = IngestResult & Served;

/** Letters, digits, `-` and `_`: it names an index in messages and in store keys. */
export function indexName(v: unknown): string {
  if (v === undefined) return 'default';
  if (typeof v !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(v))
    throw invalidParam('index', 'must be 1 to 64 letters, digits, - or _');
  return v;
}

export const ownerOf = (ctx: RequestContext): Owner => ({ tenant: ctx.tenant.name, keyId: ctx.key.id });

/** The chunks as the tenant's guardrails let them through (one user message per chunk). */
function guarded(ctx: RequestContext, model: string, texts: string[]): string[] {
  const probe: ChatRequest = { model, messages: texts.map((t) => ({ role: 'user', content: t })) };
  const out = guardRequest(ctx, probe);
  if (out === probe) return texts;
  return out.messages.map((m, i) => (typeof m.content === 'string' ? m.content : texts[i]!));
}

const modelMismatch = (index: string, built: string): GatewayError =>
  invalidParam(
    'embedding_model',
    `index ${index} was built with embedding model ${built}; ingest with that model or use another index`,
  );

export function checkSameModel(info: IndexInfo | undefined, index: string, model: string): void {
  if (info && info.embeddingModel !== model) throw modelMismatch(index, info.embeddingModel);
}

/** A store's refusal to keep more chunks, as the answer the caller gets; other errors as they are. */
export function storageRefusal(err: unknown, index: string): unknown {
  if (err instanceof RagModelMismatch) return modelMismatch(index, err.embeddingModel);
  if (err instanceof RagIndexFull)
    return new GatewayError(
      'invalid_request_error',
      `index ${index}: ${err.message}; delete documents or use another index`,
      { param: 'index' },
    );
  if (err instanceof RagStorageFull)
    return err.scope === 'tenant'
      ? new GatewayError('insufficient_quota', `${err.message}; delete documents to make room`)
      : new GatewayError('insufficient_storage', `${err.message}; try again after documents are deleted`);
  return err;
}

export async function runIngest(
  deps: PipelineDeps,
  ctx: RequestContext,
  store: RagIndexStore,
  req: IngestRequest,
): Promise<IngestOutcome> {
  const owner = ownerOf(ctx);
  checkSameModel(await store.info(owner, req.index), req.index, req.embeddingModel);
  const chunks = chunkText(req.text, req.chunking);
  if (chunks.length === 0) throw invalidParam('file', 'the document has no text');
  // Before embedding: room for the document is taken first, so one the store cannot keep is
  // refused without being charged, and two ingests (on any pods) cannot both take the last room.
  let hold: RoomHold;
  try {
    hold = await store.reserve(owner, req.index, chunks.length);
  } catch (err) {
    throw storageRefusal(err, req.index);
  }
  let info: IndexInfo;
  let embedded: Embedded;
  const id = `doc_${randomUUID().replaceAll('-', '')}`;
  try {
    const texts = guarded(
      ctx,
      req.embeddingModel,
      chunks.map((c) => c.text),
    );
    embedded = await embedTexts(deps, ctx, req.embeddingModel, texts, 'rag.ingest');
    // Read again: a concurrent ingest may have created the index with another model meanwhile.
    const now = await store.info(owner, req.index);
    checkSameModel(now, req.index, req.embeddingModel);
    if (now && now.dimensions !== embedded.vectors[0]!.length)
      throw invalidParam(
        'embedding_model',
        `${req.embeddingModel} now returns ${embedded.vectors[0]!.length} dimensions; index ${req.index} holds ${now.dimensions}`,
      );
    info = await store.add(
      owner,
      req.index,
      req.embeddingModel,
      texts.map((text, i) => ({
        documentId: id,
        filename: req.filename,
        chunkIndex: i,
        text,
        vector: unitVector(embedded.vectors[i]!),
      })),
      hold,
    );
  } catch (err) {
    // Nothing kept, so the room goes back (a guardrail refusal, a failed embedding, a refused
    // add). Embeddings already served stay charged (settled in embedTexts).
    await store.release(hold).catch(() => undefined);
    throw storageRefusal(err, req.index);
  }
  return {
    response: {
      object: 'rag.ingest',
      id,
      index: req.index,
      filename: req.filename,
      chunks: chunks.length,
      embedding_model: req.embeddingModel,
      index_chunks: info.chunks,
      index_documents: info.documents,
      usage: { prompt_tokens: embedded.promptTokens, total_tokens: embedded.promptTokens },
    },
    costUsd: embedded.costUsd,
    deployment: embedded.deployment,
    log: embedded.log,
  };
}
