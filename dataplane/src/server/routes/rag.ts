/**
 * `POST /v1/rag/ingest` (multipart with a `file`, or JSON with `text` or a base64 `file`)
 * and `POST /v1/rag/query` (JSON): Gantry's own retrieval over per-tenant-and-key indexes.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
// Its declarations add parts() and isMultipart() to the request type.
import type {} from '@fastify/multipart';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { ChatMessage } from '../../formats/openai/types.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { chunkOptions } from '../../pipeline/rag/chunk.ts';
import { documentText, jsonFile } from '../../pipeline/rag/document.ts';
import { indexName, ownerOf, runIngest, type IngestRequest } from '../../pipeline/rag/ingest.ts';
import { runQuery, topKOf } from '../../pipeline/rag/query.ts';
import type { RagIndexStore } from '../../stores/rag/types.ts';
import { replyServedHeaders, streamHeaders } from './headers.ts';
import { OpenAIStreamEncoder } from '../../formats/openai/encoder.ts';
import type { ClientStreamEncoder } from '../../formats/encoder.ts';
import type { ChatChunk, Usage } from '../../formats/openai/types.ts';
import type { Citation } from '../../pipeline/rag/query.ts';
import { writeStream } from '../stream-writer.ts';
import type { RouteHooks } from './hooks.ts';
import { withMultipart, type MediaLimits } from './media-scope.ts';

const record = (v: unknown, what = 'body'): Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalidParam(what, 'must be a JSON object');
  return v as Record<string, unknown>;
};

const required = (v: unknown, name: string): string => {
  if (typeof v !== 'string' || v === '') throw invalidParam(name, 'is required');
  return v;
};

/** The multipart form: one `file` and text fields, the file within the upload limit. */
async function readForm(request: FastifyRequest, maxBytes: number) {
  const fields: Record<string, string> = {};
  let file: { filename: string; text: string } | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes } })) {
      if (part.type === 'field') {
        if (part.valueTruncated)
          throw new GatewayError('request_too_large', `field ${part.fieldname} is too long`);
        fields[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== 'file' || file) {
        part.file.resume();
        throw invalidParam(part.fieldname, 'unexpected file; send one document in the field file');
      }
      const bytes = await part.toBuffer();
      file = { filename: part.filename || 'document', text: documentText(bytes, part.mimetype, 'file') };
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE')
      throw new GatewayError('request_too_large', `file is larger than the limit of ${maxBytes} bytes`, {
        param: 'file',
      });
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
      throw new GatewayError('request_too_large', 'the upload has too many parts');
    if (code === 'FST_PROTO_VIOLATION' || code === 'FST_MP_PREMATURE_CLOSE')
      throw new GatewayError('invalid_request_error', 'the multipart body is malformed or incomplete');
    throw err;
  }
  if (!file) throw invalidParam('file', 'is required');
  return { fields, file };
}

async function ingestRequest(request: FastifyRequest, maxBytes: number): Promise<IngestRequest> {
  if (request.isMultipart()) {
    const { fields, file } = await readForm(request, maxBytes);
    return {
      embeddingModel: required(fields.embedding_model ?? fields.model, 'embedding_model'),
      index: indexName(fields.index),
      filename: file.filename,
      text: file.text,
      chunking: chunkOptions(fields.chunk_size, fields.chunk_overlap),
    };
  }
  const body = record(request.body);
  if ((body.text === undefined) === (body.file === undefined))
    throw invalidParam('text', 'send either text or file');
  let doc: { filename: string; text: string };
  if (body.text !== undefined) {
    if (typeof body.text !== 'string') throw invalidParam('text', 'must be a string');
    if (Buffer.byteLength(body.text) > maxBytes)
      throw new GatewayError('request_too_large', `text is larger than the limit of ${maxBytes} bytes`, {
        param: 'text',
      });
    doc = {
      filename: typeof body.filename === 'string' ? body.filename.slice(0, 256) : 'document',
      text: body.text,
    };
  } else doc = jsonFile(body.file, maxBytes);
  const chunking = body.chunking === undefined ? {} : record(body.chunking, 'chunking');
  return {
    embeddingModel: required(body.embedding_model ?? body.model, 'embedding_model'),
    index: indexName(body.index),
    ...doc,
    chunking: chunkOptions(chunking.chunk_size, chunking.chunk_overlap),
  };
}

/** OpenAI chat chunks, the first of which also carries the retrieved `citations`. */
class CitingEncoder implements ClientStreamEncoder {
  private cited = false;

  constructor(
    private readonly inner: OpenAIStreamEncoder,
    private readonly citations: Citation[],
  ) {}

  chunk(c: ChatChunk): string {
    if (this.cited) return this.inner.chunk(c);
    this.cited = true;
    return this.inner.chunk({ ...c, citations: this.citations } as ChatChunk);
  }

  finish(usage: Usage, model?: string): string {
    return this.inner.finish(usage, model);
  }

  fail(error: GatewayError): string {
    return this.inner.fail(error);
  }
}

interface IndexParams {
  Params: { index: string };
}

/** Chat fields a query may set; anything else is refused by name rather than dropped. */
const PASSED = new Set([
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'seed',
  'user',
]);
const OWN = new Set(['model', 'index', 'query', 'messages', 'top_k', 'stream', 'stream_options']);

function queryMessages(body: Record<string, unknown>): ChatMessage[] {
  if ((body.query === undefined) === (body.messages === undefined))
    throw invalidParam('query', 'send either query (the question) or messages');
  if (body.query !== undefined) return [{ role: 'user', content: required(body.query, 'query') }];
  if (!Array.isArray(body.messages) || body.messages.length === 0 || body.messages.length > 256)
    throw invalidParam('messages', 'must be an array of 1 to 256 chat messages');
  return body.messages.map((m, i) => {
    const msg = record(m, `messages[${i}]`);
    if (msg.role !== 'user' && msg.role !== 'assistant' && msg.role !== 'system')
      throw invalidParam(`messages[${i}].role`, 'must be user, assistant or system');
    return msg as unknown as ChatMessage;
  });
}

export function ragRoutes(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  limits: MediaLimits,
  store: RagIndexStore,
): void {
  withMultipart(app, limits, (scope) => {
    scope.post('/v1/rag/ingest', async (request, reply) => {
      const ctx = hooks.context(request, reply);
      ctx.usage.endpoint = 'rag.ingest';
      const result = await runIngest(deps, ctx, store, await ingestRequest(request, limits.maxUploadBytes));
      replyServedHeaders(reply, ctx, result, result.costUsd);
      return result.response;
    });
  });

  // The caller's own index only: another key's index of the same name is a different one.
  app.get<IndexParams>('/v1/rag/indexes/:index', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const index = indexName(request.params.index);
    const info = await store.info(ownerOf(ctx), index);
    if (!info) throw new GatewayError('not_found', `index ${index} not found`);
    return {
      object: 'rag.index',
      index,
      embedding_model: info.embeddingModel,
      dimensions: info.dimensions,
      chunks: info.chunks,
      documents: info.documents,
    };
  });

  // Every document of the caller's index, and with them its room in the tenant's quota.
  app.delete<IndexParams>('/v1/rag/indexes/:index', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const index = indexName(request.params.index);
    if (!(await store.deleteIndex(ownerOf(ctx), index)))
      throw new GatewayError('not_found', `index ${index} not found`);
    return { object: 'rag.index.deleted', index, deleted: true };
  });

  app.delete<IndexParams & { Params: { document_id: string } }>(
    '/v1/rag/indexes/:index/documents/:document_id',
    async (request, reply) => {
      const ctx = hooks.context(request, reply);
      const index = indexName(request.params.index);
      const id = request.params.document_id;
      if (!(await store.deleteDocument(ownerOf(ctx), index, id)))
        throw new GatewayError('not_found', `document ${id.slice(0, 128)} not found in index ${index}`);
      return { object: 'rag.document.deleted', id, index, deleted: true };
    },
  );

  app.post('/v1/rag/query', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    ctx.usage.endpoint = 'rag.query';
    const body = record(request.body);
    for (const k of Object.keys(body))
      if (!OWN.has(k) && !PASSED.has(k))
        throw invalidParam(k.slice(0, 64), 'is not supported by /v1/rag/query');
    if (body.stream !== undefined && typeof body.stream !== 'boolean')
      throw invalidParam('stream', 'must be a boolean');
    const options = body.stream_options === undefined ? {} : record(body.stream_options, 'stream_options');
    const extra = Object.fromEntries(Object.entries(body).filter(([k]) => PASSED.has(k)));
    const result = await runQuery(deps, ctx, store, {
      model: required(body.model, 'model'),
      index: indexName(body.index),
      messages: queryMessages(body),
      topK: topKOf(body.top_k),
      extra,
      stream: body.stream === true,
    });
    if (result.kind === 'completion') {
      replyServedHeaders(reply, ctx, result, result.costUsd);
      return result.response;
    }
    const { outcome, citations, embeddingCostUsd } = result;
    reply.hijack();
    const encoder = new CitingEncoder(
      new OpenAIStreamEncoder(outcome.meta, options.include_usage === true),
      citations,
    );
    const streamed = await writeStream(
      reply.raw,
      streamHeaders(ctx, outcome),
      encoder,
      outcome.chunks,
      // The trailer's cost is the whole query's: the embedding was settled before the stream.
      async (end, gone) => {
        const settled = await outcome.settle(end, gone);
        return { ...settled, costUsd: settled.costUsd + embeddingCostUsd };
      },
      hooks.shutdown,
    );
    await hooks.streamed(request, streamed);
  });
}
