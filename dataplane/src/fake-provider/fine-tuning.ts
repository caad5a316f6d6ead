/**
 * The fake's fine-tuning jobs (OpenAI's `/fine_tuning/jobs` family), kept in memory for the
 * life of the process. A job moves one step each time it is retrieved (queued → running →
 * succeeded, with `trained_tokens` and a fine-tuned model name), so a gateway can create,
 * watch, settle and cancel them offline without a clock.
 */
import { asString, isRecord, nowSeconds, randomId } from './behaviour.ts';
import { files } from './openai-files.ts';
import { openaiError } from './openai-errors.ts';
import type { ErrorFormat, Outcome, Route } from './types.ts';

interface Job {
  id: string;
  object: 'fine_tuning.job';
  model: string;
  created_at: number;
  status: 'queued' | 'running' | 'succeeded' | 'cancelled';
  training_file: string;
  validation_file: string | null;
  fine_tuned_model: string | null;
  hyperparameters: Record<string, unknown>;
  metadata: Record<string, string> | null;
  suffix: string | null;
  error: null;
  result_files: string[];
  trained_tokens: number | null;
  finished_at: number | null;
  seed: number;
}

const jobs = new Map<string, Job>();

/**
 * Tokens trained: a quarter of the training file's bytes (the fake's rough tokenizer) times
 * the epochs asked for (3 for auto), at least one epoch's worth of 1,000 when the file is unknown.
 */
export function trainedTokens(job: Pick<Job, 'training_file' | 'hyperparameters'>): number {
  const bytes = files.get(job.training_file)?.content.length;
  const perEpoch = typeof bytes === 'number' ? Math.max(1, Math.ceil(bytes / 4)) : 1_000;
  const epochs = job.hyperparameters.n_epochs;
  return perEpoch * (typeof epochs === 'number' && epochs > 0 ? epochs : 3);
}

/** One step per read; cancelled and succeeded jobs stay as they are. */
function advance(job: Job): void {
  if (job.status === 'queued') job.status = 'running';
  else if (job.status === 'running') {
    job.status = 'succeeded';
    job.trained_tokens = trainedTokens(job);
    job.finished_at = nowSeconds();
    job.fine_tuned_model = `ft:${job.model}:fake::${job.id.slice(-8)}`;
  }
}

const notFound = (id: string) =>
  openaiError(404, `Could not find fine-tune: ${id}`, 'invalid_request_error', 'fine_tune_not_found', 'id');

function create(body: Record<string, unknown>): Outcome {
  const metadata = isRecord(body.metadata) ? (body.metadata as Record<string, string>) : null;
  const job: Job = {
    id: randomId('ftjob-'),
    object: 'fine_tuning.job',
    model: asString(body.model) ?? '',
    created_at: nowSeconds(),
    status: 'queued',
    training_file: asString(body.training_file) ?? '',
    validation_file: asString(body.validation_file) ?? null,
    fine_tuned_model: null,
    hyperparameters: isRecord(body.hyperparameters) ? body.hyperparameters : { n_epochs: 'auto' },
    metadata,
    suffix: asString(body.suffix) ?? null,
    error: null,
    result_files: [],
    trained_tokens: null,
    finished_at: null,
    seed: typeof body.seed === 'number' ? body.seed : 42,
  };
  jobs.set(job.id, job);
  return { kind: 'json', body: job };
}

/** `metadata[k]=v` query filters, as OpenAI's list takes them. */
function matches(job: Job, url: URL): boolean {
  for (const [k, v] of url.searchParams) {
    const m = /^metadata\[(.+)\]$/.exec(k);
    if (m && job.metadata?.[m[1]!] !== v) return false;
  }
  return true;
}

function list(url: URL): Outcome {
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const after = url.searchParams.get('after');
  let all = [...jobs.values()].filter((j) => matches(j, url)).reverse();
  if (after) all = all.slice(all.findIndex((j) => j.id === after) + 1);
  return { kind: 'json', body: { object: 'list', data: all.slice(0, limit), has_more: all.length > limit } };
}

type Operation = 'create' | 'list' | 'retrieve' | 'cancel';

function operationOf(method: string, pathname: string): { op: Operation; id?: string } | undefined {
  if (/\/fine_tuning\/jobs$/.test(pathname)) {
    if (method === 'POST') return { op: 'create' };
    return method === 'GET' ? { op: 'list' } : undefined;
  }
  const m = /\/fine_tuning\/jobs\/([^/]+)(\/cancel)?$/.exec(pathname);
  if (!m) return undefined;
  const id = decodeURIComponent(m[1]!);
  if (m[2]) return method === 'POST' ? { op: 'cancel', id } : undefined;
  return method === 'GET' ? { op: 'retrieve', id } : undefined;
}

export function fineTuningRoute(
  method: string,
  pathname: string,
  authorized: Route['authorized'],
  errors: ErrorFormat,
): Route | undefined {
  const found = operationOf(method, pathname);
  if (!found) return undefined;
  const { op, id } = found;
  return {
    errors,
    authorized,
    bodyless: method === 'GET',
    validate: (ctx) => {
      if (id !== undefined) return jobs.has(id) ? undefined : notFound(id);
      if (op !== 'create') return undefined;
      for (const field of ['model', 'training_file'])
        if (typeof ctx.body[field] !== 'string')
          return openaiError(
            400,
            `Missing required parameter: '${field}'.`,
            'invalid_request_error',
            null,
            field,
          );
      // OpenAI's answer to a file it does not hold: a 400 blaming the field, not a 404.
      for (const field of ['training_file', 'validation_file']) {
        const id = ctx.body[field];
        if (typeof id === 'string' && !files.has(id))
          return openaiError(400, `invalid ${field}: ${id}`, 'invalid_request_error', null, field);
      }
      return undefined;
    },
    describe: (ctx) => ({ model: asString(ctx.body.model), stream: false }),
    answer: (ctx): Outcome => {
      if (op === 'create') return create(ctx.body);
      if (op === 'list') return list(ctx.url);
      const job = jobs.get(id!)!;
      if (op === 'cancel') {
        if (job.status !== 'succeeded') job.status = 'cancelled';
      } else advance(job);
      return { kind: 'json', body: job };
    },
  };
}
