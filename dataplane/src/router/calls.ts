/**
 * One attempt against one deployment, per endpoint: build the upstream request with the
 * deployment's adapter, send it, and turn the answer into canonical form or an
 * UpstreamFailure the router can judge.
 */
import type { Deployment } from '../config/snapshot.ts';
import type {
  ChatCompletion,
  ChatRequest,
  CompletionRequest,
  CompletionResponse,
  EmbeddingRequest,
  EmbeddingResponse,
  Usage,
} from '../formats/openai/types.ts';
import type { ProviderAdapter, RawUpstreamRequest } from '../providers/types.ts';
import { believableUsage, isTokenCount } from '../accounting/reported-usage.ts';
import { GatewayError } from '../errors.ts';
import type { ClientSignal } from './client-signal.ts';
import { blameRequest } from './request-fault.ts';
import {
  classifyUpstreamFailure,
  readErrorBody,
  UpstreamFailure,
  type UpstreamClient,
  type UpstreamResponse,
} from './upstream.ts';

export interface CallContext {
  upstream: UpstreamClient;
  adapter: ProviderAdapter;
  deployment: Deployment;
  signal: ClientSignal;
  /** Absolute time the whole request must be answered by: no attempt waits past it. */
  deadline: number;
  /** Sent with every attempt (request id, trace context); the adapter's own headers win. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Called as the request goes on the wire (the client had not left yet): the provider may bill it from here. */
  onSent?: (() => void) | undefined;
}

/** Send and return the response when it is a 2xx; any other status becomes an UpstreamFailure. */
export async function sendOk(
  ctx: CallContext,
  req: RawUpstreamRequest,
  stream: boolean,
): Promise<UpstreamResponse> {
  const t = ctx.deployment.timeouts;
  const left = Math.max(1, ctx.deadline - Date.now());
  // A stream's first token is due within firstTokenMs of sending, so its headers are too.
  const firstTokenMs = stream && t.firstTokenMs !== undefined ? Math.min(t.firstTokenMs, left) : undefined;
  // send() refuses a request whose client has gone, synchronously, so this is not called then.
  if (!ctx.signal.aborted) ctx.onSent?.();
  const res = await ctx.upstream.send(
    ctx.headers ? { ...req, headers: { ...ctx.headers, ...req.headers } } : req,
    {
      connectMs: t.connectMs,
      headersMs: Math.min(t.headersMs, firstTokenMs ?? left, left),
      bodyMs: stream ? t.idleMs : Math.min(t.totalMs, left),
      totalMs: stream ? undefined : Math.min(t.totalMs, left),
      firstTokenMs,
    },
    ctx.signal,
  );
  if (res.status >= 200 && res.status < 300) return res;
  const text = await readErrorBody(res.body);
  const classified = ctx.adapter.error(res.status, res.headers, text);
  throw new UpstreamFailure(
    blameRequest(classified, {
      body: req.body,
      upstreamModel: ctx.deployment.target.upstreamModel,
      url: req.url,
    }),
    true,
  );
}

/** A JSON object answer; anything else is the deployment misbehaving (and fails over). */
export async function readJsonObject(
  ctx: Pick<CallContext, 'signal'>,
  res: UpstreamResponse,
): Promise<Record<string, unknown>> {
  const body = await readJson(ctx, res);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new UpstreamFailure({
      kind: 'server',
      status: res.status,
      message: 'upstream answer is not a JSON object',
    });
  return body as Record<string, unknown>;
}

async function readJson(ctx: Pick<CallContext, 'signal'>, res: UpstreamResponse): Promise<unknown> {
  try {
    return await res.body.json();
  } catch (err) {
    if ((err as { name?: string }).name === 'SyntaxError')
      throw new UpstreamFailure({
        kind: 'server',
        status: res.status,
        message: 'upstream sent invalid JSON',
      });
    // The body broke off or stalled while being read.
    throw classifyUpstreamFailure(err, ctx.signal);
  }
}

/**
 * The adapter could not make sense of a 2xx answer: the deployment misbehaved. Only this
 * step is blamed on the deployment; a throw while building the request is the gateway's own.
 */
function decode<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof UpstreamFailure || err instanceof GatewayError) throw err;
    throw new UpstreamFailure({
      kind: 'server',
      status: 0,
      message: `invalid upstream response: ${(err as Error).message}`,
    });
  }
}

export async function chatCall(ctx: CallContext, req: ChatRequest): Promise<ChatCompletion> {
  const res = await sendOk(
    ctx,
    ctx.adapter.chat.request({ ...req, stream: false }, ctx.deployment.target),
    false,
  );
  const body = await readJson(ctx, res);
  return believed(decode(() => ctx.adapter.chat.response(body, ctx.deployment.target)));
}

export async function embeddingsCall(ctx: CallContext, req: EmbeddingRequest): Promise<EmbeddingResponse> {
  const adapter = ctx.adapter.embeddings;
  if (!adapter)
    throw new UpstreamFailure({ kind: 'bad_request', status: 0, message: 'embeddings not supported' });
  const res = await sendOk(ctx, adapter.request(req, ctx.deployment.target), false);
  const body = await readJson(ctx, res);
  const answer = decode(() => adapter.response(body, ctx.deployment.target));
  // An unbelievable count reads as none: the caller counts the input itself then.
  const prompt = isTokenCount(answer.usage.prompt_tokens) ? answer.usage.prompt_tokens : 0;
  answer.usage = { prompt_tokens: prompt, total_tokens: prompt };
  return answer;
}

export async function completionsCall(ctx: CallContext, req: CompletionRequest): Promise<CompletionResponse> {
  const adapter = ctx.adapter.completions;
  if (!adapter)
    throw new UpstreamFailure({ kind: 'bad_request', status: 0, message: 'completions not supported' });
  const res = await sendOk(ctx, adapter.request({ ...req, stream: false }, ctx.deployment.target), false);
  const body = await readJson(ctx, res);
  return believed(decode(() => adapter.response(body, ctx.deployment.target)));
}

/**
 * The answer with its usage only when the count is believable (accounting/reported-usage.ts);
 * without it, the caller bills its own count, as for a provider that reports none.
 */
function believed<T extends { usage?: Usage | undefined }>(answer: T): T {
  const usage = believableUsage(answer.usage);
  if (usage) answer.usage = usage;
  else delete answer.usage;
  return answer;
}
