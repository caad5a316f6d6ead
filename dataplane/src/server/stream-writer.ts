/**
 * Writes a committed stream to the client with backpressure. Headers go out with the first
 * chunk; the cost is known only at the end and travels as an HTTP trailer (HTTP/1.1; an
 * HTTP/1.0 client gets the same events on a close-delimited body without it).
 */
import type { ServerResponse } from 'node:http';
import { ResponseHeaders } from '../brand.ts';
import { GatewayError } from '../errors.ts';
import type { ClientStreamEncoder } from '../formats/encoder.ts';
import type { ChatChunk } from '../formats/openai/types.ts';
import type { StreamEnd, StreamSettlement } from '../pipeline/stream-relay.ts';
import { formatUsd } from '../accounting/cost.ts';
import { oversizedMessage } from '../router/errors.ts';
import { attemptHeaders } from '../router/router.ts';
import type { UpstreamError } from '../providers/types.ts';

export interface StreamResult {
  /** How the request ended, for metrics and logs (the headers said 200 long before). */
  status: number;
  clientGone: boolean;
  /** When the first event left for the client (time to first token). */
  firstChunkAt: number | undefined;
}

/**
 * Known only at the end: the cost, and who served. `X-Gantry-Provider` went out as a header
 * naming the deployment that started the stream; the trailer names every deployment that
 * contributed, in order, when a cut stream was continued elsewhere.
 */
const TRAILERS = [
  ResponseHeaders.cost,
  ResponseHeaders.provider,
  ResponseHeaders.attempts,
  ResponseHeaders.failed,
].join(', ');

/**
 * A stream's own headers as a flat name, value list, the form `writeHead` takes without
 * walking an object. Handing it one object spread from these and the request's headers (18
 * properties, a new one per response) cost ~3-4 KB of old-generation allocation per stream at
 * 16 connections (promoted, or allocated old outright in some processes: 17 KB per stream), a
 * third of what a stream left in old space; with the list it is 3 KB in all. Issue 15's RSS
 * target hangs on this: docs/decisions.md, "Memory (issue 15)".
 */
const SSE_HEAD: readonly string[] = [
  'content-type',
  'text/event-stream; charset=utf-8',
  'cache-control',
  'no-cache',
  'x-accel-buffering',
  'no',
];

export const SHUTTING_DOWN = 'the gateway is shutting down and could not finish this request; retry it';

/** Chunked encoding, and with it trailers, exists from HTTP/1.1 on. */
export function carriesTrailers(major: number, minor: number): boolean {
  return major > 1 || (major === 1 && minor >= 1);
}

/**
 * Sends a stream's status and headers, and tells whether the cost can follow as a trailer.
 * An HTTP/1.0 body has no chunked framing, so it is delimited by closing the connection.
 */
export function openStream(res: ServerResponse, headers: Record<string, string>): boolean {
  const trailers = carriesTrailers(res.req.httpVersionMajor, res.req.httpVersionMinor);
  const list: string[] = [];
  // As an object spread would have it: the request's headers win over the stream's own,
  // except that an HTTP/1.0 answer always closes its connection.
  for (const name in headers) if (trailers || name !== 'connection') list.push(name, headers[name]!);
  for (let i = 0; i < SSE_HEAD.length; i += 2)
    if (!(SSE_HEAD[i]! in headers)) list.push(SSE_HEAD[i]!, SSE_HEAD[i + 1]!);
  if (!trailers) list.push('connection', 'close');
  else if (!('trailer' in headers)) list.push('trailer', TRAILERS);
  res.writeHead(200, list);
  return trailers;
}

/** The value a closed relay returns; nothing reads it. */
const ABANDONED = undefined as unknown as StreamEnd;

export async function writeStream(
  res: ServerResponse,
  headers: Record<string, string>,
  encoder: ClientStreamEncoder,
  chunks: AsyncGenerator<ChatChunk[], StreamEnd>,
  settle: (end: StreamEnd, clientGone: boolean) => Promise<StreamSettlement>,
  shutdown?: AbortSignal,
): Promise<StreamResult> {
  const result: StreamResult = { status: 500, clientGone: false, firstChunkAt: undefined };
  try {
    const withTrailers = openStream(res, headers);
    let step = await chunks.next();
    while (!step.done) {
      // The chunks of one upstream read leave as one write: one chunked-encoding frame and
      // one socket write for all their events.
      let text = '';
      for (const chunk of step.value) text += encoder.chunk(chunk);
      // A gone client stops nothing here: the relay ends soon (its upstream was aborted) and
      // still settles, charging what was produced.
      if (text && !res.destroyed) {
        result.firstChunkAt ??= Date.now();
        if (!res.write(text)) await drained(res);
      }
      step = await chunks.next();
    }
    const end = step.value;
    result.clientGone = res.destroyed;
    const settled = await settle(end, result.clientGone);
    // The drain deadline aborted the upstream: the client is told, never silently cut.
    const cut = end.outcome === 'failed' && !result.clientGone && shutdown?.aborted === true;
    result.status = result.clientGone ? 499 : end.outcome === 'complete' ? 200 : cut ? 503 : 502;
    if (res.destroyed) return result;
    if (end.outcome === 'complete') res.write(encoder.finish(settled.usage, settled.model));
    else if (cut) res.write(encoder.fail(new GatewayError('service_unavailable', SHUTTING_DOWN)));
    else
      res.write(
        encoder.fail(new GatewayError('upstream_error', `stream interrupted: ${interruptedBy(end.error)}`)),
      );
    if (withTrailers) res.addTrailers(trailers(settled, end));
  } catch (err) {
    // A throw outside the relay (the encoder, a write) leaves it paused at a chunk, its
    // upstream body open and unread: closing it runs its cleanup, which cancels the upstream.
    await chunks.return(ABANDONED).catch(() => undefined);
    // Without a status line there is no stream to carry an error event.
    if (!res.headersSent) {
      res.destroy();
      return result;
    }
    if (res.destroyed) {
      result.clientGone = true;
      result.status = 499;
      return result;
    }
    const error = err instanceof GatewayError ? err : new GatewayError('internal_error', 'stream failed');
    res.write(encoder.fail(error));
  }
  res.end();
  return result;
}

function trailers(settled: StreamSettlement, end: StreamEnd): Record<string, string> {
  const out: Record<string, string> = { [ResponseHeaders.cost]: formatUsd(settled.costUsd) };
  if (settled.providers && settled.providers.length > 0)
    out[ResponseHeaders.provider] = settled.providers.join(',');
  return Object.assign(out, attemptHeaders(end.log));
}

/** Resolves when the socket takes more, or is gone (a closed socket never emits 'drain' again). */
export function drained(res: ServerResponse): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** Why a stream broke, in the words its 502 would have had. */
const interruptedBy = (e: UpstreamError): string =>
  e.kind === 'oversized' ? oversizedMessage(e) : e.message;
