/**
 * Carries a committed stream to the client and keeps it honest: a stream that dies or
 * stalls after bytes were sent is continued on a deployment that accepts the partial
 * answer as prefill, or ends as a failure; it is never passed off as complete.
 */
import type { Deployment } from '../config/snapshot.ts';
import type { ChatChunk, FinishReason, Usage } from '../formats/openai/types.ts';
import type { LiveStream } from '../router/live-stream.ts';
import type { AttemptLog, Routed } from '../router/router.ts';
import type { ClientSignal } from '../router/client-signal.ts';
import { UpstreamFailure } from '../router/upstream.ts';
import type { UpstreamError } from '../providers/types.ts';

/**
 * What one deployment contributed to a stream. A continued stream has several parts, each
 * charged at its own deployment's price.
 */
export interface StreamPart {
  deployment: Deployment;
  /** The text already sent when this part began (given to it as prefill); '' for the first. */
  prefix: string;
  /** The text this part added, as the client received it. */
  text: string;
  /**
   * The tool calls' names and arguments this part sent, concatenated: an answer too (a report
   * of no output for it is no report), and what a cut one is billed on besides `text`.
   */
  toolCallText: string;
  /** What the provider reported; partial or absent when the part was cut. */
  usage: Usage | undefined;
  /** The part ended by a cut (and was continued, or the stream failed) rather than by finishing. */
  cut: boolean;
}

export interface StreamMeta {
  id: string;
  created: number;
  model: string;
}

/**
 * `deployment` (the last part's) is undefined and `parts` empty for a cached answer replayed
 * as a stream; `usage` is the last part's report.
 */
export type StreamEnd =
  | {
      outcome: 'complete';
      usage: Usage | undefined;
      text: string;
      finishReason: FinishReason | null;
      deployment: Deployment | undefined;
      parts: StreamPart[];
      log: AttemptLog;
    }
  | {
      outcome: 'failed';
      error: UpstreamError;
      text: string;
      deployment: Deployment | undefined;
      parts: StreamPart[];
      log: AttemptLog;
    };

/** An ended stream as settled: what the client is told in the last event and the trailers. */
export interface StreamSettlement {
  usage: Usage;
  costUsd: number;
  /** Every deployment that contributed, in order; absent for a replayed cache hit. */
  providers?: string[] | undefined;
  /** The model ids that served (comma-separated when a fallback model continued). */
  model?: string | undefined;
}

export type Continue = (partialText: string, failed: Deployment) => Promise<Routed<LiveStream> | undefined>;

/** Told how each deployment's part ended: finished, or cut by the upstream (not by the client). */
export type PartVerdict = (
  part: Pick<Routed<LiveStream>, 'deployment' | 'claim'>,
  failure: UpstreamError | undefined,
) => void;

/** Yields the client's chunks of each upstream read together (never an empty step). */
export async function* relayStream(
  first: Routed<LiveStream>,
  meta: StreamMeta,
  continueWith: Continue,
  signal: ClientSignal,
  verdict: PartVerdict = () => undefined,
): AsyncGenerator<ChatChunk[], StreamEnd> {
  let current = first;
  let text = '';
  let toolCalls = false;
  let finish: FinishReason | null = null;
  let continued = false;
  const log: AttemptLog = { attempts: first.log.attempts, failed: [...first.log.failed] };
  let part = newPart(first, '');
  const parts: StreamPart[] = [part];

  // However the relay ends (fault, consumer gone), an unfinished upstream is let go.
  let settledEnd = false;
  try {
    for (;;) {
      try {
        const head = relayed(current.value.head, continued);
        if (head.length > 0) yield head;
        for (;;) {
          const step = await current.value.rest.next();
          if (step.done) break;
          const batch = relayed(step.value, false);
          if (batch.length > 0) yield batch;
        }
        settledEnd = true;
        return complete();
      } catch (err) {
        if (!(err instanceof UpstreamFailure)) throw err;
        current.value.cancel();
        settledEnd = true;
        // The answer had finished: a broken tail (usage, end marker) does not make it incomplete.
        if (finish !== null) return complete();
        part.usage = current.value.translator.usage;
        part.cut = true;
        // The client left: nobody to continue for, and the deployment did nothing wrong.
        if (signal.aborted) return failed(err.upstream);
        verdict(current, err.upstream);
        if (!log.failed.includes(current.deployment.name)) log.failed.push(current.deployment.name);
        const next = text.length > 0 && !toolCalls ? await continueWith(text, current.deployment) : undefined;
        if (!next) return failed(err.upstream);
        settledEnd = false;
        log.attempts += next.log.attempts;
        for (const f of next.log.failed) if (!log.failed.includes(f)) log.failed.push(f);
        current = next;
        part = newPart(next, text);
        parts.push(part);
        continued = true;
      }
    }
  } finally {
    if (!settledEnd) current.value.cancel();
  }

  function complete(): StreamEnd {
    part.usage = current.value.translator.usage;
    verdict(current, undefined);
    return {
      outcome: 'complete',
      usage: part.usage,
      text,
      finishReason: finish,
      deployment: current.deployment,
      parts,
      log,
    };
  }

  function failed(error: UpstreamError): StreamEnd {
    return { outcome: 'failed', error, text, deployment: current.deployment, parts, log };
  }

  /**
   * What the client gets of one step's chunks, noted as the answer so far. A continuation's
   * head drops role-only chunks only up to the first chunk it keeps: the head holds every chunk of the
   * read that brought the token, and what follows the token belongs to the answer.
   */
  function relayed(chunks: readonly ChatChunk[], dropRoleOnly: boolean): ChatChunk[] {
    const out: ChatChunk[] = [];
    let dropping = dropRoleOnly;
    for (const chunk of chunks) {
      const c = normalise(chunk, meta, dropping);
      if (!c) continue;
      dropping = false;
      out.push(track(c));
    }
    return out;
  }

  function track(chunk: ChatChunk): ChatChunk {
    const choice = chunk.choices[0];
    if (choice) {
      if (typeof choice.delta.content === 'string') {
        text += choice.delta.content;
        part.text += choice.delta.content;
      }
      const calls = choice.delta.tool_calls;
      if (calls?.length) {
        toolCalls = true;
        for (const call of calls)
          part.toolCallText += (call.function?.name ?? '') + (call.function?.arguments ?? '');
      }
      if (choice.finish_reason !== null) finish = choice.finish_reason;
    }
    return chunk;
  }
}

const newPart = (routed: Routed<LiveStream>, prefix: string): StreamPart => ({
  deployment: routed.deployment,
  prefix,
  text: '',
  toolCallText: '',
  usage: undefined,
  cut: false,
});

/**
 * One id/model/created for the whole stream; usage is sent once at the end by the encoder;
 * a continuation's opening role chunk is dropped (the client already has one).
 *
 * The chunk is changed in place: a translator's chunks are made for this relay and read by
 * nothing else once relayed, and two copies per event were a tenth of a stream's allocation.
 * The members come out in the order a copy (`{...rest, id, created, model}`) would give them:
 * present ones keep their place, missing ones are added in that order.
 */
function normalise(chunk: ChatChunk, meta: StreamMeta, dropRoleOnly: boolean): ChatChunk | undefined {
  if (chunk.choices.length === 0) return undefined;
  if (dropRoleOnly && chunk.choices.every(carriesNothing)) return undefined;
  // Set to undefined rather than deleted: JSON.stringify leaves it out all the same, and deleting a
  // member that is not the last (OpenAI sends "usage":null before "obfuscation") turns the object
  // into a dictionary, which serialises slower than the copy this replaced.
  if (chunk.usage !== undefined) chunk.usage = undefined;
  chunk.id = meta.id;
  chunk.created = meta.created;
  chunk.model = meta.model;
  return chunk;
}

/** Only a role (or empty content): reasoning and refusal deltas are part of the answer. */
const carriesNothing = (c: ChatChunk['choices'][number]): boolean =>
  !c.delta.content &&
  !c.delta.tool_calls &&
  !c.delta.reasoning_content &&
  !c.delta.refusal &&
  c.finish_reason === null;
