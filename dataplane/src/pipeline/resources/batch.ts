/**
 * Batches: the input file a caller uploads (`purpose: batch`) and the usage a finished batch
 * reports. A batch runs one model (OpenAI's rule too), so the file names the model Gantry
 * checks the key against, places the file on, and prices the batch at. Pure.
 */
import { costUsd, heldCostUsd } from '../../accounting/cost.ts';
import { MAX_ESTIMATE_TOKENS, MAX_ESTIMATE_USD } from '../../accounting/estimate.ts';
import type { Pricing } from '../../config/snapshot.ts';
import type { Usage } from '../../formats/openai/types.ts';
import { invalidParam } from '../../errors.ts';
import { DEFAULT_MAX_JSON_DEPTH, depthMessage, exceedsDepth } from '../../formats/json-depth.ts';

/** OpenAI's ceiling on requests in one batch. */
export const MAX_BATCH_REQUESTS = 50_000;

export const BATCH_ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/embeddings',
  '/v1/completions',
  '/v1/responses',
  '/v1/moderations',
] as const;

export interface BatchInput {
  model: string;
  lines: Record<string, unknown>[];
  /** The file's line number (1-based) of each of `lines`, for errors. */
  lineNumbers: number[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parse and check a batch input file; every problem names the line. Each line gets the depth
 * bound request bodies get at the edge: the file is re-serialised for the upstream, and
 * JSON.stringify overflows the stack on deep nesting.
 */
export function readBatchInput(text: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): BatchInput {
  const lines: Record<string, unknown>[] = [];
  const lineNumbers: number[] = [];
  let model: string | undefined;
  const ids = new Set<string>();
  // Walked line by line, not split: a file of 25 MB of newlines would otherwise be an array of
  // 25 million strings (over 300 MB and a second of CPU) before the first line is read.
  let i = -1;
  for (let start = 0; start <= text.length;) {
    const end = text.indexOf('\n', start);
    const stop = end === -1 ? text.length : end;
    i++;
    const from = start;
    start = stop + 1;
    // An empty line costs no string.
    if (stop === from) continue;
    const row = text.slice(from, stop).trim();
    if (row === '') continue;
    const at = `line ${i + 1}`;
    if (lines.length === MAX_BATCH_REQUESTS)
      throw invalidParam('file', `a batch input file holds at most ${MAX_BATCH_REQUESTS} requests`);
    let line: unknown;
    try {
      line = JSON.parse(row);
    } catch {
      throw invalidParam('file', `${at} is not JSON; a batch input file is JSON Lines`);
    }
    if (!isRecord(line)) throw invalidParam('file', `${at} is not a JSON object`);
    if (exceedsDepth(line, maxDepth)) throw invalidParam('file', `file[${at}]: ${depthMessage(maxDepth)}`);
    if (typeof line.custom_id !== 'string' || line.custom_id === '')
      throw invalidParam('file', `${at} has no custom_id`);
    if (ids.has(line.custom_id))
      throw invalidParam('file', `${at} repeats custom_id ${line.custom_id}; each must be unique`);
    ids.add(line.custom_id);
    if (line.method !== 'POST') throw invalidParam('file', `${at}: method must be POST`);
    if (typeof line.url !== 'string' || !(BATCH_ENDPOINTS as readonly string[]).includes(line.url))
      throw invalidParam('file', `${at}: url must be one of ${BATCH_ENDPOINTS.join(', ')}`);
    if (!isRecord(line.body) || typeof line.body.model !== 'string' || line.body.model === '')
      throw invalidParam('file', `${at} has no body.model`);
    if (model !== undefined && line.body.model !== model)
      throw invalidParam(
        'file',
        `${at} uses model ${line.body.model}, but earlier lines use ${model}; a batch runs one model`,
      );
    model = line.body.model;
    lines.push(line);
    lineNumbers.push(i + 1);
  }
  if (model === undefined) throw invalidParam('file', 'the batch input file has no requests');
  return { model, lines, lineNumbers };
}

/** The file as the deployment must receive it: its own model name on every line. */
export function upstreamBatchInput(input: BatchInput, upstreamModel: string): string {
  return input.lines
    .map((l) => JSON.stringify({ ...l, body: { ...(l.body as object), model: upstreamModel } }))
    .join('\n')
    .concat('\n');
}

const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Over for good: nothing more will run or be reported. */
export const isFinishedBatch = (batch: Record<string, unknown>): boolean =>
  typeof batch.status === 'string' && TERMINAL.has(batch.status);

/**
 * Most tokens one batch request is believed to have read, or written, when its deployment
 * states no context window: above the largest windows offered.
 */
export const MAX_TOKENS_PER_BATCH_REQUEST = 2_000_000;

/**
 * The tokens a batch used, once it is over and says so (OpenAI reports usage on finished
 * batches; partial work of an expired or cancelled batch is billed too). Undefined while it
 * runs or when it reports none. Each count is believed up to what the batch's requests could
 * use: their number (`request_counts.total`, at most MAX_BATCH_REQUESTS) times the holding
 * deployment's context window (else MAX_TOKENS_PER_BATCH_REQUEST). Before, 1e300 tokens
 * charged $1e294.
 */
export function finishedBatchUsage(
  batch: Record<string, unknown>,
  holder: { contextWindow: number | undefined } = { contextWindow: undefined },
): Usage | undefined {
  if (typeof batch.status !== 'string' || !TERMINAL.has(batch.status)) return undefined;
  const u = batch.usage;
  if (!isRecord(u)) return undefined;
  const total = isRecord(batch.request_counts) ? batch.request_counts.total : undefined;
  const requests =
    typeof total === 'number' && Number.isInteger(total) && total >= 1 && total <= MAX_BATCH_REQUESTS
      ? total
      : MAX_BATCH_REQUESTS;
  const cap = requests * (holder.contextWindow ?? MAX_TOKENS_PER_BATCH_REQUEST);
  const n = (v: unknown) =>
    typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.min(Math.floor(v), cap) : 0;
  const prompt = n(u.input_tokens);
  const completion = n(u.output_tokens);
  const cached = isRecord(u.input_tokens_details) ? n(u.input_tokens_details.cached_tokens) : 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(cached > 0 && { prompt_tokens_details: { cached_tokens: cached } }),
  };
}

/** Outputs of these endpoints are not generated tokens. */
const NO_OUTPUT = new Set(['/v1/embeddings', '/v1/moderations']);

/**
 * The most a batch of these requests can cost at these prices: every request body counted
 * as input (its JSON text, a bound on its prompt), and its output bound (`max_completion_tokens`,
 * `max_tokens`, `max_output_tokens`, else `defaultMaxOutput`) times `n`.
 */
export function batchEstimateUsd(
  input: BatchInput,
  pricing: Pricing | undefined,
  defaultMaxOutput: number,
  countTokens: (text: string) => number,
): number {
  const bodies: string[] = [];
  let output = 0;
  for (const line of input.lines) {
    const body = line.body as Record<string, unknown>;
    bodies.push(JSON.stringify(body));
    if (NO_OUTPUT.has(String(line.url))) continue;
    const asked = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens;
    const max = typeof asked === 'number' && Number.isInteger(asked) && asked > 0 ? asked : defaultMaxOutput;
    const n = typeof body.n === 'number' && Number.isInteger(body.n) && body.n > 1 ? body.n : 1;
    output = Math.min(output + max * n, MAX_ESTIMATE_TOKENS);
  }
  // One count over all bodies: the tokenizer remembers texts, and a file's lines are not worth remembering one by one.
  // Held, not charged: every prompt token at the dearer of the input and cached rates.
  const cost = heldCostUsd(pricing, countTokens(bodies.join('\n')), output);
  return clampEstimateUsd(cost);
}

/**
 * An estimate within the request estimator's ceiling. An unbounded one (`max_tokens: 1e300`)
 * would be Infinity, which JSON stores as null: a hold of nothing.
 */
export const clampEstimateUsd = (usd: number): number =>
  Number.isNaN(usd) ? MAX_ESTIMATE_USD : Math.min(Math.max(usd, 0), MAX_ESTIMATE_USD);

/** A finished batch's charge: its tokens at the holding deployment's token prices. */
export function batchCostUsd(pricing: Pricing | undefined, usage: Usage): number {
  return costUsd(pricing, usage);
}
