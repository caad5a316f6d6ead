/** Socket-level helpers: bodies, JSON answers, and stream writing with stream faults applied. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorReply, Fault, Outcome } from './types.ts';

/** The body's bytes (JSON is decoded by the caller; multipart uploads carry binary files). */
export function readRaw(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A binary answer in a few writes, as an audio stream arrives. */
export function sendRaw(
  res: ServerResponse,
  contentType: string,
  body: Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': body.length, ...headers });
  const chunk = Math.max(1, Math.ceil(body.length / 4));
  for (let at = 0; at < body.length; at += chunk) res.write(body.subarray(at, at + chunk));
  res.end();
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, reply: ErrorReply, extra: Record<string, string> = {}): void {
  sendJson(res, reply.status, reply.body, { ...extra, ...reply.headers });
}

/** Resolves true after `ms`, or false as soon as the client has gone away. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when the client goes away (or the server closes the connection). */
export function untilClosed(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Exchanges a `hold` fault keeps waiting, each told whether to answer (true) or give up (false). */
export type Held = Set<(answer: boolean) => void>;

/**
 * True once `letGo(held, true)` lets the exchange answer; false when its client closed it
 * first (before the hold was reached too: nothing is left held then) or a reset let it go.
 */
export function untilReleased(held: Held, closed: AbortSignal): Promise<boolean> {
  if (closed.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = (): void => go(false);
    const go = (answer: boolean): void => {
      held.delete(go);
      closed.removeEventListener('abort', onClose);
      resolve(answer);
    };
    held.add(go);
    closed.addEventListener('abort', onClose, { once: true });
  });
}

/** Lets every held exchange go on (`answer`) or give up; how many there were. */
export function letGo(held: Held, answer: boolean): number {
  const waiting = [...held];
  for (const go of waiting) go(answer);
  return waiting.length;
}

const BREAK_GRACE_MS = 30;

type StreamOutcome = Extract<Outcome, { kind: 'stream' }>;

/** Where stall/break/stream-error cut: after `n` content frames, before anything but preamble. */
function cutAfter(fault: Fault | undefined): number | undefined {
  if (
    fault?.type === 'stall-stream' ||
    fault?.type === 'break-stream' ||
    fault?.type === 'stream-error' ||
    fault?.type === 'endless-line'
  ) {
    return Math.max(0, fault.afterChunks);
  }
  return undefined;
}

/** Past a gateway's 16 MiB bound on one SSE line. */
const ENDLESS_LINE_BYTES = 17 * 1024 * 1024;

/** A `data:` line of `bytes` without its end, in 1 MiB writes as the client takes them. */
async function writeEndlessLine(res: ServerResponse, bytes: number, signal: AbortSignal): Promise<void> {
  const piece = 'x'.repeat(1024 * 1024);
  res.write('data: ');
  for (let sent = 0; sent < bytes && !signal.aborted && !res.destroyed; sent += piece.length)
    if (!res.write(piece.slice(0, Math.min(piece.length, bytes - sent)))) await writable(res);
}

/** Resolves once `res` drains or closes, leaving no listener behind. */
const writable = (res: ServerResponse): Promise<void> =>
  new Promise((done) => {
    const go = () => {
      res.off('drain', go);
      res.off('close', go);
      done();
    };
    res.on('drain', go);
    res.on('close', go);
  });

/**
 * Writes a stream frame by frame. `streamError` renders the provider's in-stream error
 * for the `stream-error` fault.
 */
export async function writeStream(
  res: ServerResponse,
  stream: StreamOutcome,
  fault: Fault | undefined,
  signal: AbortSignal,
  streamError: () => string,
): Promise<void> {
  res.writeHead(200, {
    'content-type': stream.contentType,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...stream.headers,
  });
  res.flushHeaders();
  const cut = cutAfter(fault);
  let content = 0;
  let garbageSent = false;
  let first = true;
  let flushed: Promise<void> = Promise.resolve();
  for (const frame of stream.frames) {
    if (frame.role === 'end' && fault?.type === 'no-done') continue;
    const pastContent = frame.role !== 'pre';
    if (cut !== undefined && pastContent && content >= cut) {
      if (fault?.type === 'break-stream') {
        // Let what was written reach the client first, so "N chunks then a dead socket" is
        // what it observes rather than a race between the data and the teardown.
        await flushed;
        await sleep(BREAK_GRACE_MS, signal);
        res.socket?.destroy();
        return;
      }
      if (fault?.type === 'endless-line') {
        await writeEndlessLine(res, fault.bytes ?? ENDLESS_LINE_BYTES, signal);
        res.end();
        return;
      }
      if (fault?.type === 'stream-error') {
        const end = fault.thenEnd ? stream.frames.find((f) => f.role === 'end') : undefined;
        res.end(streamError() + (end?.data ?? ''));
        return;
      }
      await untilClosed(signal);
      return;
    }
    if (fault?.type === 'slow-stream') {
      const ms = first ? (fault.firstChunkDelayMs ?? fault.chunkDelayMs) : fault.chunkDelayMs;
      if (!(await sleep(ms, signal))) return;
    }
    first = false;
    if (fault?.type === 'malformed-chunk' && !garbageSent && pastContent && content >= fault.atChunk) {
      res.write(stream.garbage);
      garbageSent = true;
    }
    if (signal.aborted) return;
    flushed = new Promise((done) => res.write(frame.data, () => done()));
    if (frame.role === 'content') content += 1;
  }
  if (fault?.type === 'no-done' && fault.keepOpen) {
    await untilClosed(signal);
    return;
  }
  res.end();
}
