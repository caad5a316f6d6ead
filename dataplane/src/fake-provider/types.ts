/**
 * Shapes shared by the fake provider's files: the public API (faults, recorded requests,
 * the server handle) and the small internal contract each wire format implements.
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface RecordedRequest {
  method: string;
  /** Path with query string, exactly as received (e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: unknown;
}

/**
 * What a `status` fault's answer says beyond its status, in each format's own words (addition).
 * `tokens`: a token-rate 429 naming the limit and the request's size, a load 429 when `used`
 * is given ("Rate limit reached … Used"), the single request's when not ("Request too large").
 * `missing`: the id of an object the request names that the provider does not hold or will not
 * let the key read.
 */
export interface StatusDetail {
  tokens?: { limit: number; requested: number; used?: number };
  missing?: string;
}

export type Fault =
  | ({
      type: 'status';
      status: number;
      retryAfterSeconds?: number;
      code?: string;
      message?: string;
      /** The field the error blames (OpenAI's `param`). */
      param?: string;
    } & StatusDetail)
  | { type: 'hang' }
  /** Addition, in-process only: the answer waits for `releaseHeld()` (a race the test starts). */
  | { type: 'hold' }
  | { type: 'delay'; ms: number }
  | { type: 'reset' }
  | { type: 'slow-stream'; chunkDelayMs: number; firstChunkDelayMs?: number }
  | { type: 'stall-stream'; afterChunks: number }
  | { type: 'break-stream'; afterChunks: number }
  | { type: 'no-done'; keepOpen?: boolean }
  | { type: 'malformed-chunk'; atChunk: number }
  /** Addition: N content chunks, then a `data:` line of `bytes` (default 17 MiB) that never ends. */
  | { type: 'endless-line'; afterChunks: number; bytes?: number }
  | { type: 'no-usage' }
  /** Addition: N content chunks, then the provider's in-stream error event, then the end of the body. */
  | {
      type: 'stream-error';
      afterChunks: number;
      status?: number;
      code?: string;
      message?: string;
      /** Then the format's clean end (`data: [DONE]`), as vLLM sends after an error event. */
      thenEnd?: boolean;
    };

export interface FaultRule {
  match?: { path?: string; model?: string; stream?: boolean };
  /** How many requests the rule applies to before it is spent; unlimited when absent. */
  times?: number;
  fault: Fault;
}

export interface FakeProvider {
  /** `http://host:port`, no trailing slash. */
  url: string;
  port: number;
  /** Every provider request in arrival order (control routes under `/_fake/` excluded). */
  requests: RecordedRequest[];
  setFaults(rules: FaultRule[]): void;
  /** Exchanges the client (the gateway) closed before the answer was complete. */
  readonly abandoned: number;
  /** Resolves the next time a client closes an exchange before its answer was complete. */
  whenAbandoned(): Promise<void>;
  /** Lets every exchange a `hold` fault holds go on to its answer; returns how many. */
  releaseHeld(): number;
  /** Forget recorded requests and fault rules. */
  reset(): void;
  close(): Promise<void>;
}

export type StatusFault = Extract<Fault, { type: 'status' }>;

/** The provider-neutral reading of a chat request that decides the answer. */
export interface Conversation {
  lastUserText: string;
  /** Characters of all text the conversation carries (see README). */
  promptChars: number;
  images: number;
  /** Trailing assistant text to continue, when the format treats it as a prefill. */
  prefill: string | undefined;
  lastIsToolResult: boolean;
  tools: ToolSpec[];
  toolChoice: ToolChoiceSpec;
  /** Structured output asked for: the answer is a JSON value satisfying it. */
  jsonSchema?: unknown;
  /** The request's output cap in tokens (`max_tokens` and the like): the answer stops there. */
  maxTokens?: number | undefined;
}

export interface ToolSpec {
  name: string;
  schema: unknown;
}

export type ToolChoiceSpec = 'auto' | 'none' | 'required' | { name: string };

/** `cut`: the answer was stopped by the request's output cap (finish reason `length` and kin). */
export type Reply =
  | { kind: 'text'; text: string; promptTokens: number; completionTokens: number; cut: boolean }
  | {
      kind: 'tool';
      name: string;
      /** When cut: only the top-level arguments whose JSON ended before the cap. */
      args: Record<string, unknown>;
      /** When cut: the arguments' JSON text up to the cap (not valid JSON). */
      argsJson: string;
      promptTokens: number;
      completionTokens: number;
      cut: boolean;
    };

export interface ErrorReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** One write of a stream; faults count `content` frames (text or tool-argument deltas). */
export interface Frame {
  role: 'pre' | 'content' | 'post' | 'end';
  data: string;
}

export type Outcome =
  | { kind: 'json'; body: unknown; headers?: Record<string, string> }
  /** Text or binary answers of the media routes (transcripts as text/srt/vtt, speech audio). */
  | { kind: 'raw'; contentType: string; body: Buffer; headers?: Record<string, string> }
  | {
      kind: 'stream';
      contentType: string;
      frames: Frame[];
      /** What `malformed-chunk` inserts. */
      garbage: string;
      headers?: Record<string, string>;
    };

export interface RouteContext {
  url: URL;
  headers: IncomingHttpHeaders;
  /** The parsed JSON object body ({} for bodyless routes). */
  body: Record<string, unknown>;
}

/** A provider's error dialect. */
export interface ErrorFormat {
  unauthorized(): ErrorReply;
  invalidJson(): ErrorReply;
  status(
    fault: {
      status: number;
      code?: string;
      message?: string;
      retryAfterSeconds?: number;
      param?: string;
      /** The model the request named, for messages that name it. */
      model?: string | undefined;
    } & StatusDetail,
  ): ErrorReply;
  /** The in-stream error frame for `stream-error`. */
  streamError(fault: { status: number; code?: string; message?: string }): string;
}

export interface Route {
  errors: ErrorFormat;
  /** GET routes read no body. */
  bodyless?: boolean;
  authorized(ctx: Omit<RouteContext, 'body'>): boolean;
  /** A request the real provider rejects (missing field, wrong role, ...). */
  validate?(ctx: RouteContext): ErrorReply | undefined;
  describe(ctx: RouteContext): { model: string | undefined; stream: boolean };
  answer(ctx: RouteContext, opts: { usage: boolean }): Outcome;
}
