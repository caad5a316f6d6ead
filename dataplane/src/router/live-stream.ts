/**
 * A streaming attempt. Nothing reaches the client until the first token has arrived, so
 * a deployment that fails or stays silent before that is failed over invisibly. After
 * that, the stream is read one upstream read at a time (the chunks decoded from one read
 * travel together, so they cost one step of each generator and one write to the client); a
 * death or stall surfaces as UpstreamFailure.
 */
import type { ChatChunk, ChatRequest } from '../formats/openai/types.ts';
import { SseParser, SseTooLong, type SseEvent } from '../formats/sse.ts';
import { Utf8Reads } from '../formats/utf8-reads.ts';
import type { StreamContext, StreamTranslator } from '../providers/types.ts';
import { sendOk, type CallContext } from './calls.ts';
import { chatOversizedCause } from './oversized-cause.ts';
import { UpstreamFailure, type UpstreamResponse } from './upstream.ts';

/** How long to wait for an end marker after the answer and its usage are complete. */
const FINISH_GRACE_MS = 250;

export interface LiveStream {
  /** Chunks read before the stream was handed over, first token included. */
  head: ChatChunk[];
  /**
   * The rest, the chunks of one upstream read per step (never an empty step); throws
   * UpstreamFailure when the upstream dies or stalls before finishing.
   */
  rest: AsyncGenerator<ChatChunk[], void>;
  translator: StreamTranslator;
  /** Stop reading and release the connection (client went away). */
  cancel(): void;
}

export async function openChatStream(
  ctx: CallContext,
  req: ChatRequest,
  stream: StreamContext,
): Promise<LiveStream> {
  // The first-token limit runs from the send, so a silent upstream fails over on time.
  const sentAt = Date.now();
  const upstreamReq = ctx.adapter.chat.request({ ...req, stream: true }, ctx.deployment.target);
  const res = await sendOk(ctx, upstreamReq, true);
  let translator: StreamTranslator;
  try {
    translator = ctx.adapter.chat.stream(ctx.deployment.target, stream);
  } catch (err) {
    // A local fault: the open upstream body must still be let go, or the pool stalls.
    res.body.destroy();
    throw err;
  }
  const rest = readChunks(res.body, translator, chatOversizedCause(req, upstreamReq.body));
  const firstTokenMs = ctx.deployment.timeouts.firstTokenMs;
  const head = await untilFirstToken(
    rest,
    res,
    firstTokenMs === undefined ? undefined : sentAt + firstTokenMs,
  );
  return { head, rest, translator, cancel: () => res.body.destroy() };
}

/** What readChunks needs of an upstream body: its reads, and a way to let it go. */
export type ChunkSource = AsyncIterable<unknown> & { destroy(): unknown };

/** Exported for tests: the chunks of each read of `body`, one step per read that has any. */
export async function* readChunks(
  body: ChunkSource,
  translator: StreamTranslator,
  /** What of the request may ask for an event past the SSE bound (oversized-cause.ts). */
  oversizedCause?: string,
): AsyncGenerator<ChatChunk[], void> {
  const parser = new SseParser();
  const reads = new Utf8Reads();
  let graceTimer: NodeJS.Timeout | undefined;
  let finalised = false;
  const complete = () => translator.done || (translator.finished && translator.usage !== undefined);
  try {
    for await (const buf of body) {
      const batch = translate(parser.push(reads.decode(buf as Buffer)), translator);
      if (batch.length > 0) yield batch;
      if (translator.error) throw new UpstreamFailure(translator.error);
      // An upstream that completed but keeps the socket open is finalised promptly.
      if (graceTimer === undefined && complete()) {
        graceTimer = setTimeout(() => {
          finalised = true;
          body.destroy();
        }, FINISH_GRACE_MS);
      }
    }
    const last = translate(parser.end(), translator);
    if (last.length > 0) yield last;
  } catch (err) {
    if (!finalised) {
      if (err instanceof UpstreamFailure) throw err;
      // Not a broken connection: the upstream kept sending, but nothing a stream should hold.
      if (err instanceof SseTooLong)
        throw new UpstreamFailure({
          kind: 'oversized',
          status: 0,
          message: err.message,
          requestCause: oversizedCause,
        });
      const code = (err as { code?: string }).code;
      const stalled = code === 'UND_ERR_BODY_TIMEOUT';
      throw new UpstreamFailure({
        kind: stalled ? 'timeout' : 'network',
        status: 0,
        message: stalled
          ? 'upstream stream stalled'
          : `upstream stream broke (${code ?? (err as Error).message})`,
      });
    }
  } finally {
    clearTimeout(graceTimer);
  }
  if (translator.error) throw new UpstreamFailure(translator.error);
  if (!translator.done && !translator.finished)
    throw new UpstreamFailure({
      kind: 'network',
      status: 0,
      message: 'upstream stream ended before the answer was complete',
    });
}

/** The chunks of these events, up to the first error the provider reports (none after it). */
function translate(events: SseEvent[], translator: StreamTranslator): ChatChunk[] {
  const out: ChatChunk[] = [];
  for (const event of events) {
    for (const chunk of translator.push(event)) out.push(chunk);
    if (translator.error) break;
  }
  return out;
}

/** The first token: what ends a stream's head. */
const carriesToken = (c: ChatChunk): boolean =>
  c.choices.some(
    (ch) =>
      (typeof ch.delta.content === 'string' && ch.delta.content.length > 0) ||
      (ch.delta.tool_calls?.length ?? 0) > 0 ||
      (ch.delta.reasoning_content?.length ?? 0) > 0 ||
      ch.finish_reason !== null,
  );

/**
 * Pull reads until one has a chunk that carries a token, by the first-token deadline when one
 * is set; the head is every chunk of those reads.
 */
async function untilFirstToken(
  rest: AsyncGenerator<ChatChunk[], void>,
  res: UpstreamResponse,
  deadline: number | undefined,
): Promise<ChatChunk[]> {
  const head: ChatChunk[] = [];
  for (;;) {
    const next = rest.next();
    const step = deadline === undefined ? await next : await withDeadline(next, deadline, res);
    if (step.done) return head;
    for (const chunk of step.value) head.push(chunk);
    if (step.value.some(carriesToken)) return head;
  }
}

function withDeadline<T>(p: Promise<T>, deadline: number, res: UpstreamResponse): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        res.body.destroy();
        p.catch(() => undefined);
        reject(
          new UpstreamFailure({
            kind: 'timeout',
            status: 0,
            message: 'no first token within the time limit',
          }),
        );
      },
      Math.max(0, deadline - Date.now()),
    );
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
