/**
 * The one interface every provider implements. An adapter only translates: canonical
 * (OpenAI chat) request → provider wire request, provider response/stream/error →
 * canonical, and reports usage. Pipeline, router and accounting never branch on provider.
 */
import type { ProviderKind } from '@gantry/crds';
import type {
  ChatChunk,
  ChatCompletion,
  ChatRequest,
  CompletionRequest,
  CompletionResponse,
  EmbeddingRequest,
  EmbeddingResponse,
  Usage,
} from '../formats/openai/types.ts';
import type { SseEvent } from '../formats/sse.ts';

/** What an adapter needs to know about the deployment it talks to. */
export interface UpstreamTarget {
  provider: ProviderKind;
  /** Base URL without trailing slash, e.g. https://api.openai.com/v1 */
  baseUrl: string;
  upstreamModel: string;
  apiKey: string | undefined;
  /** azure-openai `api-version` */
  apiVersion?: string | undefined;
  /** The deployment accepts a trailing assistant message as a prefill to continue. */
  prefill: boolean;
}

export interface UpstreamRequest {
  method: 'POST' | 'GET' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** What the upstream client sends: JSON text, or the bytes of a multipart upload (media). */
export interface RawUpstreamRequest extends Omit<UpstreamRequest, 'body'> {
  body: string | Uint8Array | undefined;
}

/**
 * Why an upstream call failed, normalised. The router decides what to do from `kind`
 * alone: retry, fail over, go to a larger model, or return the reason to the caller.
 */
export type UpstreamErrorKind =
  | 'rate_limited' // 429: honour retry-after, else back off / fail over
  | 'overloaded' // 503/529: fail over
  | 'server' // other 5xx: fail over
  | 'auth' // provider rejected our credentials: deployment is broken, fail over
  | 'not_found' // provider does not know the model: deployment is broken, fail over
  | 'context_length' // prompt too long for this model: larger-context fallback or caller
  | 'content_policy' // provider refused the content: caller
  | 'bad_request' // caller's fault, another attempt cannot fix it
  | 'too_large' // this request alone exceeds the deployment's limit (tokens per minute, bytes): fail over, else caller's 413
  | 'bad_reference' // a 403/404 blaming an object the request names, not the deployment: caller, 404
  | 'network' // connection refused/reset before headers
  | 'oversized' // a stream's line or event past the SSE parser's bound: a deployment fault unless `requestCause`
  | 'timeout'; // connect/headers/total/first-token timeout

export interface UpstreamError {
  kind: UpstreamErrorKind;
  /** Upstream HTTP status, 0 when no response arrived. */
  status: number;
  /** The provider's own reason, safe to show the caller. */
  message: string;
  retryAfterMs?: number | undefined;
  /**
   * No connection was made (refused, connect timeout, unknown host): the request never reached
   * the upstream, so repeating it cannot make anything twice.
   */
  unsent?: true | undefined;
  /**
   * On `oversized` only: what of the request may have asked for an event that large (`echo`,
   * image output, its own size), in words for the caller. Set, the event is not held against
   * the deployment nor failed over (every deployment would send it); unset, it is the
   * deployment's fault (router/oversized-cause.ts).
   */
  requestCause?: string | undefined;
  /** The request field the provider blames, and its error code, when it names them (OpenAI's `param`, `code`). */
  param?: string | undefined;
  code?: string | undefined;
}

/** Per-request, stateful translator of a provider's SSE stream into canonical chunks. */
export interface StreamTranslator {
  /** Translate one upstream SSE event. Malformed events are skipped (return []). */
  push(event: SseEvent): ChatChunk[];
  /** The provider sent its explicit end marker ([DONE], message_stop, ...). */
  readonly done: boolean;
  /** A finish_reason has been emitted: the answer is complete even without an end marker. */
  readonly finished: boolean;
  /** Usage reported by the provider so far. */
  readonly usage: Usage | undefined;
  /** An error the provider reported inside the stream. */
  readonly error: UpstreamError | undefined;
  /** Malformed events skipped so far. */
  readonly skipped: number;
}

export interface StreamContext {
  /** id/created/model the canonical chunks carry. */
  id: string;
  created: number;
  model: string;
}

export interface ChatAdapter {
  /** Build the upstream call. `req.stream` decides streaming; usage reporting is requested. */
  request(req: ChatRequest, target: UpstreamTarget): UpstreamRequest;
  response(body: unknown, target: UpstreamTarget): ChatCompletion;
  stream(target: UpstreamTarget, ctx: StreamContext): StreamTranslator;
}

export interface EmbeddingsAdapter {
  request(req: EmbeddingRequest, target: UpstreamTarget): UpstreamRequest;
  response(body: unknown, target: UpstreamTarget): EmbeddingResponse;
}

export interface CompletionsAdapter {
  request(req: CompletionRequest, target: UpstreamTarget): UpstreamRequest;
  response(body: unknown, target: UpstreamTarget): CompletionResponse;
  /** Streams of the legacy endpoint are passed through as-is; each event is read once here. */
  streamEvent(data: string): CompletionStreamEvent;
}

/** What one event of a legacy completions stream tells the gateway. */
export interface CompletionStreamEvent {
  usage: Usage | undefined;
  /** An error event, classified like the same error answered as HTTP. */
  error: UpstreamError | undefined;
  /** The first choice's text: what is counted when the stream reports no usage. */
  text: string;
}

export interface ProviderAdapter {
  readonly kind: ProviderKind;
  readonly chat: ChatAdapter;
  readonly embeddings?: EmbeddingsAdapter;
  readonly completions?: CompletionsAdapter;
  /** Images, audio and video endpoints (OpenAI wire format). */
  readonly media?: MediaAdapter;
  /** Classify a non-2xx upstream answer. `body` is the raw text (possibly truncated). */
  error(status: number, headers: Record<string, string | string[] | undefined>, body: string): UpstreamError;
}

/** The media endpoints, by the path OpenAI serves them under. */
export type MediaOperation =
  | 'images/generations'
  | 'images/edits'
  | 'images/variations'
  | 'audio/transcriptions'
  | 'audio/speech'
  | 'videos'
  | 'videos/remix'
  | 'videos/retrieve'
  | 'videos/content';

/** One uploaded file, already read and checked at the edge. */
export interface MediaFile {
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

/** A media request as the caller sent it: JSON fields, or multipart fields and files. */
export type MediaBody =
  | { kind: 'json'; json: Record<string, unknown> }
  | { kind: 'multipart'; fields: Record<string, string>; files: MediaFile[] }
  | { kind: 'none' };

export interface MediaAdapter {
  /** `id` addresses an existing upstream object (a video job) for the operations that need one. */
  request(op: MediaOperation, body: MediaBody, target: UpstreamTarget, id?: string): RawUpstreamRequest;
}
