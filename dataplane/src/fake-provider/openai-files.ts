/**
 * The fake's Files and Batch APIs, in memory for the life of the process. A batch moves one
 * step each time it is read (validating → in_progress → finalizing → completed), so a client
 * polling it sees it finish without waiting on a clock; when it completes, every request of
 * its input file is answered by the fake model, written to an output file, and its usage
 * summed on the batch.
 */
import { asString, isRecord, nowSeconds, randomId } from './behaviour.ts';
import { fileBytes, isFileInfo } from './multipart.ts';
import { answerChat } from './openai-chat.ts';
import { answerCompletion, answerEmbeddings } from './openai-misc.ts';
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
import type { Route } from './types.ts';

interface StoredFile {
  object: Obj;
  content: Buffer;
}

export const files = new Map<string, StoredFile>();
const batches = new Map<string, Obj>();

const PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];

export function storeFile(filename: string, purpose: string, content: Buffer): Obj {
  const object: Obj = {
    id: randomId('file-'),
    object: 'file',
    bytes: content.length,
    created_at: nowSeconds(),
    filename,
    purpose,
    status: 'processed',
    expires_at: null,
    status_details: null,
  };
  files.set(object.id as string, { object, content });
  return object;
}

const fileOps = (method: string, id: string | undefined, sub: string | undefined): Operation | undefined => {
  if (id === undefined) {
    if (method === 'GET')
      return {
        run: (ctx) => {
          const purpose = ctx.url.searchParams.get('purpose');
          const all = [...files.values()]
            .map((f) => f.object)
            .filter((o) => !purpose || o.purpose === purpose);
          return cursorList(all, ctx.url);
        },
      };
    if (method !== 'POST') return undefined;
    return {
      check: (ctx) => {
        if (!isFileInfo(ctx.body.file)) return badParam('file', "Missing required parameter: 'file'.");
        const purpose = asString(ctx.body.purpose);
        if (!purpose || !PURPOSES.includes(purpose))
          return badParam('purpose', `Invalid value for 'purpose': expected one of ${PURPOSES.join(', ')}.`);
        if (purpose === 'batch') return checkBatchFile(fileBytes(ctx.body.file).toString('utf8'));
        return undefined;
      },
      run: (ctx) => {
        const file = ctx.body.file as Parameters<typeof fileBytes>[0];
        return json(storeFile(file.filename, String(ctx.body.purpose), fileBytes(file)));
      },
    };
  }
  const check = () => (files.has(id) ? undefined : missing('file', id));
  if (method === 'GET' && sub === undefined) return { check, run: () => json(files.get(id)!.object) };
  if (method === 'GET' && sub === 'content')
    return {
      check,
      run: () => ({ kind: 'raw', contentType: 'application/octet-stream', body: files.get(id)!.content }),
    };
  if (method === 'DELETE' && sub === undefined)
    return {
      check,
      run: () => {
        files.delete(id);
        return json({ id, object: 'file', deleted: true });
      },
    };
  return undefined;
};

/** What OpenAI checks of a batch input file at upload: JSON Lines of requests with a custom_id. */
function checkBatchFile(text: string) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return badParam('file', 'The batch input file is empty.');
  for (const [i, l] of lines.entries()) {
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      return badParam('file', `Line ${i + 1} is not valid JSON.`);
    }
    if (!isRecord(v) || typeof v.custom_id !== 'string' || !isRecord(v.body))
      return badParam('file', `Line ${i + 1} needs custom_id, method, url and body.`);
  }
  return undefined;
}

const STEPS = ['validating', 'in_progress', 'finalizing', 'completed'] as const;

/** Answer every request of the input file with the fake model; the output file and summed usage. */
function runBatch(batch: Obj): void {
  const input = files.get(String(batch.input_file_id))?.content.toString('utf8') ?? '';
  let inputTokens = 0;
  let outputTokens = 0;
  const out: string[] = [];
  for (const l of input.split('\n').filter((x) => x.trim() !== '')) {
    const line = JSON.parse(l) as { custom_id: string; url: string; body: Obj };
    const model = asString(line.body.model) ?? '';
    const outcome = line.url.endsWith('/embeddings')
      ? answerEmbeddings(line.body, model, true)
      : line.url.endsWith('/chat/completions')
        ? answerChat({ ...line.body, stream: false }, { azure: false, model }, true)
        : answerCompletion({ ...line.body, stream: false }, model, true);
    const body = outcome.kind === 'json' && isRecord(outcome.body) ? outcome.body : {};
    const usage = isRecord(body.usage) ? body.usage : {};
    inputTokens += Number(usage.prompt_tokens ?? 0);
    outputTokens += Number(usage.completion_tokens ?? 0);
    out.push(
      JSON.stringify({
        id: randomId('batch_req_'),
        custom_id: line.custom_id,
        response: { status_code: 200, request_id: randomId('req_'), body },
        error: null,
      }),
    );
  }
  const output = storeFile(
    `${String(batch.id)}_output.jsonl`,
    'batch_output',
    Buffer.from(out.join('\n') + '\n'),
  );
  Object.assign(batch, {
    output_file_id: output.id,
    request_counts: { total: out.length, completed: out.length, failed: 0 },
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  });
}

/** One step per read; a cancelling batch becomes cancelled. */
function advance(batch: Obj): void {
  const now = nowSeconds();
  if (batch.status === 'cancelling') {
    Object.assign(batch, { status: 'cancelled', cancelled_at: now });
    return;
  }
  const at = STEPS.indexOf(batch.status as (typeof STEPS)[number]);
  if (at === -1 || at === STEPS.length - 1) return;
  const next = STEPS[at + 1]!;
  batch.status = next;
  batch[`${next}_at`] = now;
  if (next === 'completed') runBatch(batch);
}

const batchOps = (method: string, id: string | undefined, sub: string | undefined): Operation | undefined => {
  if (id === undefined) {
    if (method === 'GET') return { run: (ctx) => cursorList([...batches.values()], ctx.url) };
    if (method !== 'POST') return undefined;
    return {
      check: (ctx) => {
        const fileId = asString(ctx.body.input_file_id);
        if (!fileId) return badParam('input_file_id', "Missing required parameter: 'input_file_id'.");
        const file = files.get(fileId);
        if (!file) return missing('file', fileId);
        if (file.object.purpose !== 'batch')
          return badParam('input_file_id', 'The input file must have purpose batch.');
        if (typeof ctx.body.endpoint !== 'string')
          return badParam('endpoint', "Missing required parameter: 'endpoint'.");
        if (ctx.body.completion_window !== '24h')
          return badParam('completion_window', "completion_window must be '24h'.");
        return undefined;
      },
      run: (ctx) => {
        const now = nowSeconds();
        const first =
          files.get(String(ctx.body.input_file_id))!.content.toString('utf8').split('\n')[0] ?? '{}';
        const model = (JSON.parse(first) as { body?: { model?: string } }).body?.model ?? null;
        const lines = files
          .get(String(ctx.body.input_file_id))!
          .content.toString('utf8')
          .split('\n')
          .filter((l) => l.trim() !== '');
        const batch: Obj = {
          id: randomId('batch_'),
          object: 'batch',
          endpoint: ctx.body.endpoint,
          model,
          errors: null,
          input_file_id: ctx.body.input_file_id,
          completion_window: '24h',
          status: 'validating',
          output_file_id: null,
          error_file_id: null,
          created_at: now,
          in_progress_at: null,
          expires_at: now + 24 * 3600,
          finalizing_at: null,
          completed_at: null,
          failed_at: null,
          expired_at: null,
          cancelling_at: null,
          cancelled_at: null,
          request_counts: { total: lines.length, completed: 0, failed: 0 },
          metadata: isRecord(ctx.body.metadata) ? ctx.body.metadata : null,
        };
        batches.set(batch.id as string, batch);
        return json(batch);
      },
    };
  }
  const check = () => (batches.has(id) ? undefined : missing('batch', id));
  if (method === 'GET' && sub === undefined)
    return {
      check,
      run: () => {
        const batch = batches.get(id)!;
        advance(batch);
        return json(batch);
      },
    };
  if (method === 'POST' && sub === 'cancel')
    return {
      check,
      run: () => {
        const batch = batches.get(id)!;
        if (!['completed', 'failed', 'expired', 'cancelled'].includes(String(batch.status)))
          Object.assign(batch, { status: 'cancelling', cancelling_at: nowSeconds() });
        return json(batch);
      },
    };
  return undefined;
};

export function filesRoute(method: string, pathname: string): Route | undefined {
  const f = matchPath(pathname, 'files');
  // `/vector_stores/{id}/files` and `/containers/{id}/files` are their own APIs.
  if (f && !/\/(vector_stores|containers)\/[^/]+\/files/.test(pathname) && f.subId === undefined) {
    const op = fileOps(method, f.id, f.sub);
    return op && operationRoute(method, op);
  }
  const b = matchPath(pathname, 'batches');
  if (b && b.subId === undefined) {
    const op = batchOps(method, b.id, b.sub);
    return op && operationRoute(method, op);
  }
  return undefined;
}
