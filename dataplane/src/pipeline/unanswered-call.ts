/**
 * A call its client abandoned after the gateway had sent it upstream. The provider bills
 * what it received whether or not anyone reads the answer, so the caller is charged that by
 * the route's own pricing: a chat prompt by the rule a cut stream part follows, an embedding's
 * input, a rerank's query and documents, the images asked for, the audio uploaded, the
 * characters to speak, the video seconds asked, one OCR page, one A2A request. Charged only
 * for the attempt that was on the wire when the client left: earlier attempts that failed
 * over are never charged, nor is a call the client left before it was sent (admission,
 * guardrails, the cache, a backoff between attempts).
 */
import { costUsd } from '../accounting/cost.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatRequest } from '../formats/openai/types.ts';
import { ClientAbortError, UpstreamFailure } from '../router/upstream.ts';
import { promptTokensOf, type RequestContext } from './context.ts';
import type { Outcome } from './settlement.ts';
import { chargeStream } from './stream-charge.ts';

/** What an attempt at `deployment` costs when its client leaves before the answer. */
export type AbandonedCharge = (deployment: Deployment) => { usage?: Outcome['usage']; costUsd: number };

export interface UnansweredCall {
  deployment: Deployment;
  /** The router's attempts so far, this one included (the usage record's `attempts`). */
  attempts: number;
  /** What the abandoned attempt amounts to; worked out only when the client did leave. */
  charge(): { usage?: Outcome['usage']; costUsd: number };
}

/** The upstream call `call` makes, told through `sent` the moment it goes on the wire. */
export type SentCall<T> = (deployment: Deployment, sent: (() => void) | undefined) => Promise<T>;

/**
 * Wraps the router's attempt function so `ctx.unanswered` names the attempt on the wire (and
 * nothing once it answered or failed on its own): the error edge charges it, by `charge`,
 * when the client is found gone.
 */
export function watchSent<T>(
  ctx: Pick<RequestContext, 'signal' | 'unanswered'>,
  charge: AbandonedCharge,
  call: SentCall<T>,
): (deployment: Deployment) => Promise<T> {
  let attempts = 0;
  return async (deployment) => {
    const attempt = ++attempts;
    const sent = (): void => {
      ctx.unanswered = { deployment, attempts: attempt, charge: () => charge(deployment) };
    };
    try {
      const value = await call(deployment, sent);
      // Answered, even if the client has just left: the route charges the answer, once.
      ctx.unanswered = undefined;
      return value;
    } catch (err) {
      // A failure of the attempt itself (the router may fail over) is not the client's to pay,
      // nor a connection that failed while the client was leaving (nothing reached the
      // provider), nor a call the provider refused with an error status (it bills none), even
      // if the client left while its error body was read.
      if (
        !ctx.signal.aborted ||
        (err instanceof ClientAbortError && err.unsent) ||
        (err instanceof UpstreamFailure && err.refused)
      )
        ctx.unanswered = undefined;
      throw err;
    }
  };
}

/** A chat call that produced nothing the client received: its prompt, as a cut stream part. */
export function chatPromptCharge(ctx: RequestContext, req: ChatRequest): AbandonedCharge {
  return (deployment) => {
    const cut = { deployment, prefix: '', text: '', toolCallText: '', usage: undefined, cut: true };
    const { usage, costUsd } = chargeStream(req, [cut], true, promptTokensOf(ctx, req));
    return { usage, costUsd };
  };
}

/** Input tokens as the gateway counts them (embeddings, legacy completions), at the deployment's price. */
export function inputTokensCharge(promptTokens: () => number): AbandonedCharge {
  return (deployment) => {
    const usage = { prompt_tokens: promptTokens(), completion_tokens: 0 };
    return { usage, costUsd: costUsd(deployment.pricing, usage) };
  };
}

/** The settlement of a request whose client left while its upstream call was out; else none. */
export function abandonedOutcome(ctx: Pick<RequestContext, 'unanswered'>): Outcome | undefined {
  const call = ctx.unanswered;
  if (!call) return undefined;
  const { usage, costUsd } = call.charge();
  return {
    status: 499,
    errorType: 'client_closed_request',
    deployment: call.deployment,
    attempts: call.attempts,
    usage,
    costUsd,
  };
}
