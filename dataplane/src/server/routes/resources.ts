/**
 * The resource families OpenAI keeps upstream, under OpenAI's own paths: files, batches,
 * vector stores (+ files, search), assistants, containers (+ files). Every object belongs to
 * the tenant and key that created it (see pipeline/resources/).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatUsd } from '../../accounting/cost.ts';
import { RequestHeaders, ResponseHeaders } from '../../brand.ts';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { readUpload, requiredFile } from '../../pipeline/media/upload.ts';
import { batchObserver, createBatch } from '../../pipeline/resources/batches.ts';
import { fileContent, uploadFile } from '../../pipeline/resources/files.ts';
import {
  createResource,
  deleteResource,
  listResources,
  readResource,
  subResource,
  subResourceBytes,
  updateResource,
  type Answer,
} from '../../pipeline/resources/operations.ts';
import { parseListQuery } from '../../pipeline/resources/paging.ts';
import { isPlainId, type ReferringRequest } from '../../pipeline/resources/references.ts';
import { searchVectorStore } from '../../pipeline/resources/search.ts';
import type { UpstreamResponse } from '../../router/upstream.ts';
import type { Family } from '../../stores/ownership/types.ts';
import { replyServedHeaders, servedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';
import { withMultipart, type MediaLimits } from './media-scope.ts';

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown> }>;

const jsonBody = (v: unknown): Record<string, unknown> => {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidParam('body', 'must be a JSON object');
  return v as Record<string, unknown>;
};

function headerModel(request: FastifyRequest): string | undefined {
  const v = request.headers[RequestHeaders.model];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

function send(ctx: RequestContext, reply: FastifyReply, a: Answer) {
  reply.headers(
    a.served
      ? servedHeaders(ctx, a.served, a.costUsd)
      : { ...ctx.responseHeaders, [ResponseHeaders.cost]: formatUsd(a.costUsd) },
  );
  return a.object;
}

function sendBytes(
  ctx: RequestContext,
  reply: FastifyReply,
  out: { res: UpstreamResponse; served: Answer['served'] },
) {
  replyServedHeaders(reply, ctx, out.served!, 0);
  const type = out.res.headers['content-type'];
  reply.header('content-type', (Array.isArray(type) ? type[0] : type) ?? 'application/octet-stream');
  return reply.send(out.res.body);
}

/** Query keys a sub-resource list passes on to the holder. */
const SUB_LIST_KEYS = ['limit', 'after', 'before', 'order', 'filter'];

function subListQuery(q: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const k of SUB_LIST_KEYS) if (typeof q[k] === 'string') params.set(k, q[k]);
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

/**
 * A sub-resource id the caller names (a vector store's or container's file) as an upstream path
 * segment. It is not looked up first (the parent is), so one that is no provider's id is the 404
 * of an unknown file before it could reach the upstream as a path (`..%2F..%2Ffiles%2F…`).
 * Built after admission (the routes pass a function), so such a request counts against the
 * rate limit like any other.
 */
const seg = (fileId: string): string => {
  if (!isPlainId(fileId))
    throw new GatewayError('not_found', `file ${fileId} not found`, { param: 'file_id' });
  return `/${encodeURIComponent(fileId)}`;
};

export function resourceRoutes(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  limits: MediaLimits,
): void {
  const handle =
    (run: (ctx: RequestContext, request: Req) => Promise<Answer>) =>
    async (request: Req, reply: FastifyReply) => {
      const ctx = hooks.context(request, reply);
      return send(ctx, reply, await run(ctx, request));
    };

  /** The CRUD every family has; `refs` names the body's references for create (and update). */
  const crud = (family: Family, path: string, opts: { update?: boolean; refs?: ReferringRequest }) => {
    app.post(
      `/v1/${path}`,
      handle((ctx, r) =>
        createResource(deps, ctx, family, jsonBody(r.body), headerModel(r), { refs: opts.refs }),
      ),
    );
    app.get(
      `/v1/${path}`,
      handle((ctx, r) => listResources(deps, ctx, family, parseListQuery(r.query))),
    );
    app.get(
      `/v1/${path}/:id`,
      handle((ctx, r) => readResource(deps, ctx, family, r.params.id!)),
    );
    app.delete(
      `/v1/${path}/:id`,
      handle((ctx, r) => deleteResource(deps, ctx, family, r.params.id!)),
    );
    if (opts.update)
      app.post(
        `/v1/${path}/:id`,
        handle((ctx, r) => updateResource(deps, ctx, family, r.params.id!, jsonBody(r.body), opts.refs)),
      );
  };

  // Files: multipart upload, the rest like every family.
  withMultipart(app, limits, (scope) => {
    scope.post('/v1/files', async (request, reply) => {
      const ctx = hooks.context(request, reply);
      const upload = await readUpload(request, {
        maxFileBytes: limits.maxUploadBytes,
        files: { file: 'any' },
      });
      const file = requiredFile(upload, 'file');
      const out = await uploadFile(deps, ctx, { fields: upload.fields, file }, headerModel(request));
      return send(ctx, reply, { ...out, costUsd: 0 });
    });
    // A container file is uploaded (multipart `file`) or copied from an owned file (JSON `file_id`).
    scope.post<{ Params: { id: string } }>('/v1/containers/:id/files', async (request, reply) => {
      const ctx = hooks.context(request, reply);
      const id = request.params.id;
      if (request.isMultipart()) {
        const upload = await readUpload(request, {
          maxFileBytes: limits.maxUploadBytes,
          files: { file: 'any' },
        });
        requiredFile(upload, 'file');
        return send(
          ctx,
          reply,
          await subResource(deps, ctx, 'container', id, 'POST', '/files', { kind: 'multipart', ...upload }),
        );
      }
      const json = jsonBody(request.body);
      if (typeof json.file_id !== 'string') throw invalidParam('file_id', 'is required (or upload a file)');
      return send(
        ctx,
        reply,
        await subResource(
          deps,
          ctx,
          'container',
          id,
          'POST',
          '/files',
          { kind: 'json', json },
          'container_file',
        ),
      );
    });
  });
  app.get(
    '/v1/files',
    handle((ctx, r) => {
      const purpose = r.query.purpose;
      if (purpose !== undefined && typeof purpose !== 'string')
        throw invalidParam('purpose', 'must be a string');
      return listResources(
        deps,
        ctx,
        'file',
        parseListQuery(r.query),
        (rec) => purpose === undefined || rec.purpose === purpose,
      );
    }),
  );
  app.get(
    '/v1/files/:id',
    handle((ctx, r) => readResource(deps, ctx, 'file', r.params.id!)),
  );
  app.delete(
    '/v1/files/:id',
    handle((ctx, r) => deleteResource(deps, ctx, 'file', r.params.id!)),
  );
  app.get('/v1/files/:id/content', async (request: Req, reply) => {
    const ctx = hooks.context(request, reply);
    return sendBytes(ctx, reply, await fileContent(deps, ctx, request.params.id!));
  });

  // Batches: no update or delete (OpenAI has none); reads charge a batch seen finished.
  app.post(
    '/v1/batches',
    handle((ctx, r) => createBatch(deps, ctx, jsonBody(r.body))),
  );
  app.get(
    '/v1/batches',
    handle((ctx, r) =>
      listResources(deps, ctx, 'batch', parseListQuery(r.query), undefined, batchObserver(deps, ctx)),
    ),
  );
  app.get(
    '/v1/batches/:id',
    handle((ctx, r) => readResource(deps, ctx, 'batch', r.params.id!, batchObserver(deps, ctx))),
  );
  app.post(
    '/v1/batches/:id/cancel',
    handle((ctx, r) =>
      readResource(deps, ctx, 'batch', r.params.id!, batchObserver(deps, ctx), {
        method: 'POST',
        sub: '/cancel',
      }),
    ),
  );

  // Vector stores and their files.
  crud('vector_store', 'vector_stores', { update: true, refs: 'vector_store' });
  app.post(
    '/v1/vector_stores/:id/files',
    handle((ctx, r) => {
      const json = jsonBody(r.body);
      if (typeof json.file_id !== 'string') throw invalidParam('file_id', 'is required');
      return subResource(
        deps,
        ctx,
        'vector_store',
        r.params.id!,
        'POST',
        '/files',
        { kind: 'json', json },
        'vector_store_file',
      );
    }),
  );
  app.get(
    '/v1/vector_stores/:id/files',
    handle((ctx, r) =>
      subResource(deps, ctx, 'vector_store', r.params.id!, 'GET', `/files${subListQuery(r.query)}`),
    ),
  );
  app.get(
    '/v1/vector_stores/:id/files/:file_id',
    handle((ctx, r) =>
      subResource(deps, ctx, 'vector_store', r.params.id!, 'GET', () => `/files${seg(r.params.file_id!)}`),
    ),
  );
  app.delete(
    '/v1/vector_stores/:id/files/:file_id',
    handle((ctx, r) =>
      subResource(deps, ctx, 'vector_store', r.params.id!, 'DELETE', () => `/files${seg(r.params.file_id!)}`),
    ),
  );
  app.post(
    '/v1/vector_stores/:id/search',
    handle((ctx, r) => searchVectorStore(deps, ctx, r.params.id!, jsonBody(r.body))),
  );

  crud('assistant', 'assistants', { update: true, refs: 'assistant' });

  // Containers and their files (created above, in the multipart scope).
  crud('container', 'containers', { refs: 'container' });
  app.get(
    '/v1/containers/:id/files',
    handle((ctx, r) =>
      subResource(deps, ctx, 'container', r.params.id!, 'GET', `/files${subListQuery(r.query)}`),
    ),
  );
  app.get(
    '/v1/containers/:id/files/:file_id',
    handle((ctx, r) =>
      subResource(deps, ctx, 'container', r.params.id!, 'GET', () => `/files${seg(r.params.file_id!)}`),
    ),
  );
  app.delete(
    '/v1/containers/:id/files/:file_id',
    handle((ctx, r) =>
      subResource(deps, ctx, 'container', r.params.id!, 'DELETE', () => `/files${seg(r.params.file_id!)}`),
    ),
  );
  app.get('/v1/containers/:id/files/:file_id/content', async (request: Req, reply) => {
    const ctx = hooks.context(request, reply);
    return sendBytes(
      ctx,
      reply,
      await subResourceBytes(
        deps,
        ctx,
        'container',
        request.params.id!,
        () => `/files${seg(request.params.file_id!)}/content`,
      ),
    );
  });
}
