/**
 * A chat call its client abandoned after the gateway had sent it upstream. The provider bills
 * the prompt it received whether or not anyone reads the answer, so the caller is charged for
 * it by the rule a cut stream part follows (the prompt as the gateway counts it, plus the
 * output it received: none). Charged only for the attempt that was on the wire when the client
 * left: earlier attempts that failed over are never charged, nor is a call the client left
 * before it was sent (admission, guardrails, the cache, a backoff between attempts).
 */
import type { Deployment } from '../config/snapshot.ts';
import type { ChatRequest, Usage } from '../formats/openai/types.ts';
import { ClientAbortError } from '../router/upstream.ts';
import { promptTokensOf, type RequestContext } from './context.ts';
import type { Outcome } from './settlement.ts';
import { chargeStream } from './stream-charge.ts';

export interface UnansweredCall {
  deployment: Deployment;
  /** The router's attempts so far, this one included (the usage record's `attempts`). */
  attempts: number;
  /** What the abandoned attempt amounts to; worked out only when the client did leave. */
  charge(): { usage: Usage; costUsd: number };
}

/** The upstream call `call` makes, told through `sent` the moment it goes on the wire. */
export type SentCall<T> = (deployment: Deployment, sent: (() => void) | undefined) => Promise<T>;

/**
 * Wraps the router's attempt function so `ctx.unanswered` names the attempt on the wire (and
 * nothing once it answered or failed on its own): the error edge charges it when the client
 * is found gone. `req` is the request as sent upstream.
 */
export function watchSent<T>(
  ctx: RequestContext,
  req: ChatRequest,
  call: SentCall<T>,
): (deployment: Deployment) => Promise<T> {
  let attempts = 0;
  return async (deployment) => {
    const attempt = ++attempts;
    const sent = (): void => {
      ctx.unanswered = { deployment, attempts: attempt, charge: () => promptCharge(ctx, req, deployment) };
    };
    try {
      const value = await call(deployment, sent);
      ctx.unanswered = undefined;
      return value;
    } catch (err) {
      // A failure of the attempt itself (the router may fail over) is not the client's to pay,
      // nor a connection that failed while the client was leaving: nothing reached the provider.
      if (!ctx.signal.aborted || (err instanceof ClientAbortError && err.unsent)) ctx.unanswered = undefined;
      throw err;
    }
  };
}

/** The prompt of a call that produced nothing the client received, at `deployment`'s price. */
function promptCharge(
  ctx: RequestContext,
  req: ChatRequest,
  deployment: Deployment,
): { usage: Usage; costUsd: number } {
  const cut = { deployment, prefix: '', text: '', toolCallText: '', usage: undefined, cut: true };
  const { usage, costUsd } = chargeStream(req, [cut], true, promptTokensOf(ctx, req));
  return { usage, costUsd };
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
