/**
 * Request ids and W3C trace context (https://www.w3.org/TR/trace-context/) at the edge:
 * what a caller may hand us, and what we hand each upstream. Pure functions.
 */

/** The trace a request belongs to, as the caller sent it or as Gantry started it. */
export interface TraceContext {
  /** 32 lower-case hex digits. */
  traceId: string;
  /** The caller's span (the parent of ours); undefined when Gantry started the trace. */
  parentId: string | undefined;
  /** Gantry's own span, when spans are exported; upstream calls are its children. */
  spanId: string | undefined;
  /** trace-flags; bit 0 = sampled. */
  flags: number;
  /** The caller's vendor state, passed on untouched. */
  state: string | undefined;
}

export const MAX_REQUEST_ID_LENGTH = 128;

/**
 * RFC 9110 token characters plus `:`, `/`, `=` and `@`, which common id schemes (base64,
 * URNs) use: nothing that could break a header, a log line or a label.
 */
const REQUEST_ID = /^[A-Za-z0-9!#$%&'*+.^_`|~:/=@-]+$/;

/** A caller's `x-request-id` when it is sane enough to log and forward; else undefined. */
export function acceptedRequestId(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.length === 0 || value.length > MAX_REQUEST_ID_LENGTH) return undefined;
  return REQUEST_ID.test(value) ? value : undefined;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** tracestate is at most 32 list members; anything longer is dropped rather than truncated. */
const MAX_TRACESTATE = 512;

/**
 * A valid `traceparent` (and its `tracestate`) as a context whose parent is the caller's
 * span. Version 00 must be exactly 55 characters; a later version may carry more after the
 * flags, which we ignore, as the recommendation says; version ff is invalid.
 */
export function parseTraceparent(traceparent: unknown, tracestate: unknown): TraceContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, flags, rest] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff') return undefined;
  if (version === '00' && rest !== undefined) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  const state =
    typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE
      ? tracestate
      : undefined;
  return { traceId, parentId, spanId: undefined, flags: parseInt(flags, 16), state };
}

export const isSampled = (t: TraceContext): boolean => (t.flags & 1) === 1;

export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${flags.toString(16).padStart(2, '0')}`;
}

/**
 * What every upstream call of a request carries: the request id, and the trace context with
 * Gantry's span as the parent when it has one, else the caller's untouched (a gateway that
 * records nothing must not break the caller's trace).
 */
export function upstreamHeaders(requestId: string, trace: TraceContext | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (!trace) return headers;
  const parent = trace.spanId ?? trace.parentId;
  if (parent === undefined) return headers;
  headers.traceparent = formatTraceparent(trace.traceId, parent, trace.flags);
  if (trace.state !== undefined) headers.tracestate = trace.state;
  return headers;
}
