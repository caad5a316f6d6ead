/**
 * The fake's vector stores (with files and search), assistants and containers (with files),
 * in memory for the life of the process. Search scores each attached file's text against the
 * query with the fake reranker's relevance, so results are deterministic.
 */
import { asString, isRecord, nowSeconds, randomId } from './behaviour.ts';
import { fileBytes, isFileInfo } from './multipart.ts';
import { fakeRelevance } from './openai-extra.ts';
import { openaiError } from './openai-errors.ts';
import { files } from './openai-files.ts';
import {
  badParam,
  cursorList,
  json,
  matchPath,
  missing,
  operationRoute,
  type Obj,
  type Operation,
} from './resource-kit.ts';
import type { ErrorReply, Route, RouteContext } from './types.ts';

interface VectorStore {
  object: Obj;
  files: Map<string, Obj>;
}
interface Container {
  object: Obj;
  files: Map<string, { object: Obj; content: Buffer }>;
}

const vectorStores = new Map<string, VectorStore>();
const assistants = new Map<string, Obj>();
const containers = new Map<string, Container>();

/** The first referenced file that does not exist, as OpenAI's 404. */
function unknownFiles(ids: unknown): ErrorReply | undefined {
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids)) return badParam('file_ids', 'file_ids must be an array.');
  for (const id of ids) if (typeof id !== 'string' || !files.has(id)) return missing('file', String(id));
  return undefined;
}

function vsFile(vs: VectorStore, fileId: string, attributes: unknown): Obj {
  const file = files.get(fileId)!;
  const object: Obj = {
    id: fileId,
    object: 'vector_store.file',
    usage_bytes: file.content.length,
    created_at: nowSeconds(),
    vector_store_id: vs.object.id,
    status: 'completed',
    last_error: null,
    attributes: isRecord(attributes) ? attributes : {},
    chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
  };
  vs.files.set(fileId, object);
  return object;
}

function countFiles(vs: VectorStore): void {
  const n = vs.files.size;
  vs.object.file_counts = { in_progress: 0, completed: n, failed: 0, cancelled: 0, total: n };
  vs.object.usage_bytes = [...vs.files.keys()].reduce((s, id) => s + (files.get(id)?.content.length ?? 0), 0);
}

function search(vs: VectorStore, body: Obj) {
  const query = Array.isArray(body.query) ? body.query.join(' ') : String(body.query);
  const max = typeof body.max_num_results === 'number' ? body.max_num_results : 10;
  const data = [...vs.files.keys()]
    .map((id) => {
      const file = files.get(id);
      const text = file?.content.toString('utf8') ?? '';
      return {
        file_id: id,
        filename: file?.object.filename ?? id,
        score: fakeRelevance(query, text),
        attributes: vs.files.get(id)!.attributes,
        content: [{ type: 'text', text: text.slice(0, 400) }],
      };
    })
    .sort((a, b) => b.score - a.score)
    .slice(0, max);
  return json({
    object: 'vector_store.search_results.page',
    search_query: Array.isArray(body.query) ? body.query : [query],
    data,
    has_more: false,
    next_page: null,
  });
}

function vectorStoreOps(method: string, p: NonNullable<ReturnType<typeof matchPath>>): Operation | undefined {
  const { id, sub, subId } = p;
  if (id === undefined) {
    if (method === 'GET')
      return {
        run: (ctx) =>
          cursorList(
            [...vectorStores.values()].map((v) => v.object),
            ctx.url,
          ),
      };
    if (method !== 'POST') return undefined;
    return {
      check: (ctx) => unknownFiles(ctx.body.file_ids),
      run: (ctx) => {
        const now = nowSeconds();
        const vs: VectorStore = {
          object: {
            id: randomId('vs_'),
            object: 'vector_store',
            created_at: now,
            name: asString(ctx.body.name) ?? '',
            usage_bytes: 0,
            file_counts: {},
            status: 'completed',
            expires_after: ctx.body.expires_after ?? null,
            expires_at: null,
            last_active_at: now,
            metadata: isRecord(ctx.body.metadata) ? ctx.body.metadata : {},
          },
          files: new Map(),
        };
        for (const f of (ctx.body.file_ids as string[] | undefined) ?? []) vsFile(vs, f, undefined);
        countFiles(vs);
        vectorStores.set(vs.object.id as string, vs);
        return json(vs.object);
      },
    };
  }
  const vs = () => vectorStores.get(id)!;
  const exists = () => (vectorStores.has(id) ? undefined : missing('vector store', id));
  if (sub === undefined) {
    if (method === 'GET') return { check: exists, run: () => json(vs().object) };
    if (method === 'POST')
      return {
        check: exists,
        run: (ctx) => {
          for (const k of ['name', 'metadata', 'expires_after'])
            if (k in ctx.body) vs().object[k] = ctx.body[k];
          return json(vs().object);
        },
      };
    if (method === 'DELETE')
      return {
        check: exists,
        run: () => {
          vectorStores.delete(id);
          return json({ id, object: 'vector_store.deleted', deleted: true });
        },
      };
    return undefined;
  }
  if (sub === 'search' && method === 'POST' && subId === undefined)
    return {
      check: (ctx) =>
        exists() ??
        (ctx.body.query === undefined
          ? badParam('query', "Missing required parameter: 'query'.")
          : undefined),
      run: (ctx) => search(vs(), ctx.body),
    };
  if (sub !== 'files') return undefined;
  if (subId === undefined) {
    if (method === 'GET')
      return { check: exists, run: (ctx) => cursorList([...vs().files.values()], ctx.url) };
    if (method !== 'POST') return undefined;
    return {
      check: (ctx) => {
        const fileId = asString(ctx.body.file_id);
        if (!fileId) return exists() ?? badParam('file_id', "Missing required parameter: 'file_id'.");
        return exists() ?? (files.has(fileId) ? undefined : missing('file', fileId));
      },
      run: (ctx) => {
        const object = vsFile(vs(), String(ctx.body.file_id), ctx.body.attributes);
        countFiles(vs());
        return json(object);
      },
    };
  }
  const attached = () =>
    exists() ?? (vs().files.has(subId) ? undefined : missing('vector store file', subId));
  if (method === 'GET') return { check: attached, run: () => json(vs().files.get(subId)) };
  if (method === 'DELETE')
    return {
      check: attached,
      run: () => {
        vs().files.delete(subId);
        countFiles(vs());
        return json({ id: subId, object: 'vector_store.file.deleted', deleted: true });
      },
    };
  return undefined;
}

/** OpenAI answers the Assistants API only with the v2 beta header. */
function betaHeader(ctx: RouteContext): ErrorReply | undefined {
  return String(ctx.headers['openai-beta'] ?? '').includes('assistants=v2')
    ? undefined
    : openaiError(
        400,
        "You must provide the 'OpenAI-Beta' header to access the Assistants API.",
        'invalid_request_error',
        'invalid_beta',
      );
}

const ASSISTANT_FIELDS = [
  'model',
  'name',
  'description',
  'instructions',
  'tools',
  'tool_resources',
  'metadata',
  'temperature',
  'top_p',
  'response_format',
  'reasoning_effort',
];

function assistantOps(method: string, id: string | undefined): Operation | undefined {
  if (id === undefined) {
    if (method === 'GET')
      return { check: betaHeader, run: (ctx) => cursorList([...assistants.values()], ctx.url) };
    if (method !== 'POST') return undefined;
    return {
      check: (ctx) =>
        betaHeader(ctx) ??
        (typeof ctx.body.model === 'string'
          ? undefined
          : badParam('model', "Missing required parameter: 'model'.")),
      run: (ctx) => {
        const a: Obj = {
          id: randomId('asst_'),
          object: 'assistant',
          created_at: nowSeconds(),
          name: null,
          description: null,
          instructions: null,
          tools: [],
          tool_resources: {},
          metadata: {},
          temperature: 1,
          top_p: 1,
          response_format: 'auto',
        };
        for (const k of ASSISTANT_FIELDS) if (k in ctx.body) a[k] = ctx.body[k];
        assistants.set(a.id as string, a);
        return json(a);
      },
    };
  }
  const check = (ctx: RouteContext) =>
    betaHeader(ctx) ?? (assistants.has(id) ? undefined : missing('assistant', id));
  if (method === 'GET') return { check, run: () => json(assistants.get(id)) };
  if (method === 'POST')
    return {
      check,
      run: (ctx) => {
        const a = assistants.get(id)!;
        for (const k of ASSISTANT_FIELDS) if (k in ctx.body) a[k] = ctx.body[k];
        return json(a);
      },
    };
  if (method === 'DELETE')
    return {
      check,
      run: () => {
        assistants.delete(id);
        return json({ id, object: 'assistant.deleted', deleted: true });
      },
    };
  return undefined;
}

function containerFile(c: Container, filename: string, content: Buffer, source: string): Obj {
  const object: Obj = {
    id: randomId('cfile_'),
    object: 'container.file',
    created_at: nowSeconds(),
    bytes: content.length,
    container_id: c.object.id,
    path: `/mnt/data/${filename}`,
    source,
  };
  c.files.set(object.id as string, { object, content });
  return object;
}

function containerOps(method: string, p: NonNullable<ReturnType<typeof matchPath>>): Operation | undefined {
  const { id, sub, subId, tail } = p;
  if (id === undefined) {
    if (method === 'GET')
      return {
        run: (ctx) =>
          cursorList(
            [...containers.values()].map((c) => c.object),
            ctx.url,
          ),
      };
    if (method !== 'POST') return undefined;
    return {
      check: (ctx) =>
        typeof ctx.body.name === 'string'
          ? unknownFiles(ctx.body.file_ids)
          : badParam('name', "Missing required parameter: 'name'."),
      run: (ctx) => {
        const now = nowSeconds();
        const c: Container = {
          object: {
            id: randomId('cntr_'),
            object: 'container',
            created_at: now,
            status: 'running',
            name: ctx.body.name,
            expires_after: isRecord(ctx.body.expires_after)
              ? ctx.body.expires_after
              : { anchor: 'last_active_at', minutes: 20 },
            last_active_at: now,
            memory_limit: asString(ctx.body.memory_limit) ?? '1g',
          },
          files: new Map(),
        };
        for (const f of (ctx.body.file_ids as string[] | undefined) ?? []) {
          const file = files.get(f)!;
          containerFile(c, String(file.object.filename), file.content, 'user');
        }
        containers.set(c.object.id as string, c);
        return json(c.object);
      },
    };
  }
  const c = () => containers.get(id)!;
  const exists = () => (containers.has(id) ? undefined : missing('container', id));
  if (sub === undefined) {
    if (method === 'GET') return { check: exists, run: () => json(c().object) };
    if (method === 'DELETE')
      return {
        check: exists,
        run: () => {
          containers.delete(id);
          return json({ id, object: 'container.deleted', deleted: true });
        },
      };
    return undefined;
  }
  if (sub !== 'files') return undefined;
  if (subId === undefined) {
    if (method === 'GET')
      return {
        check: exists,
        run: (ctx) =>
          cursorList(
            [...c().files.values()].map((f) => f.object),
            ctx.url,
          ),
      };
    if (method !== 'POST') return undefined;
    return {
      check: (ctx) => {
        if (exists()) return exists();
        if (isFileInfo(ctx.body.file)) return undefined;
        const fileId = asString(ctx.body.file_id);
        if (!fileId) return badParam('file', 'Send a file or a file_id.');
        return files.has(fileId) ? undefined : missing('file', fileId);
      },
      run: (ctx) => {
        if (isFileInfo(ctx.body.file))
          return json(containerFile(c(), ctx.body.file.filename, fileBytes(ctx.body.file), 'user'));
        const file = files.get(String(ctx.body.file_id))!;
        return json(containerFile(c(), String(file.object.filename), file.content, 'user'));
      },
    };
  }
  const held = () => exists() ?? (c().files.has(subId) ? undefined : missing('container file', subId));
  if (method === 'GET' && tail === 'content')
    return {
      check: held,
      run: () => ({
        kind: 'raw',
        contentType: 'application/octet-stream',
        body: c().files.get(subId)!.content,
      }),
    };
  if (tail !== undefined) return undefined;
  if (method === 'GET') return { check: held, run: () => json(c().files.get(subId)!.object) };
  if (method === 'DELETE')
    return {
      check: held,
      run: () => {
        c().files.delete(subId);
        return json({ id: subId, object: 'container.file.deleted', deleted: true });
      },
    };
  return undefined;
}

export function storesRoute(method: string, pathname: string): Route | undefined {
  const vs = matchPath(pathname, 'vector_stores');
  if (vs) {
    const op = vectorStoreOps(method, vs);
    return op && operationRoute(method, op);
  }
  const a = matchPath(pathname, 'assistants');
  if (a && a.sub === undefined) {
    const op = assistantOps(method, a.id);
    return op && operationRoute(method, op);
  }
  const c = matchPath(pathname, 'containers');
  if (c) {
    const op = containerOps(method, c);
    return op && operationRoute(method, op);
  }
  return undefined;
}
