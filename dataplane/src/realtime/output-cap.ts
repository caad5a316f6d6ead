/**
 * Which `max_output_tokens` a Realtime response runs under, from the upstream's word rather
 * than the client's. A `session.update` the upstream refuses (an `error` event, the session
 * left as it was) must not set the cap a hold and a bill are priced on, so the session's cap is
 * what `session.created`/`session.updated` report; while an update is unanswered, holds assume
 * the looser of the two. A response's own cap bounds its bill only when its `response.created`
 * echoes the number its hold assumed: a server-started response can take a client's queued hold
 * (the pairing is first in, first out), and then the echo shows whose it is.
 */
import { isRecord } from './events.ts';
import { SessionUpdates } from './session-updates.ts';

/** A `max_output_tokens` as the protocol has it: a whole number, or "inf" (unbounded). */
export type Cap = number | 'inf';

/** The cap `v` sets: undefined when `v` sets none (absent, or no value the protocol allows). */
export function readCap(v: unknown): Cap | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return Math.floor(v);
  return v === 'inf' ? 'inf' : undefined;
}

/** The cap a session or response object states, under its GA name or the beta's. */
export function statedCap(o: unknown): Cap | undefined {
  if (!isRecord(o)) return undefined;
  return readCap(o.max_output_tokens) ?? readCap(o.max_response_output_tokens);
}

/** The looser of two caps: "inf" over any number, else the larger. */
const looser = (a: Cap, b: Cap): Cap => (a === 'inf' || b === 'inf' ? 'inf' : Math.max(a, b));

/** The session's cap as the upstream confirmed it, and the caps of updates it has not answered. */
export class SessionCap {
  /** The protocol's default until the upstream says otherwise. */
  private confirmedCap: Cap = 'inf';
  private readonly updates = new SessionUpdates(statedCap);

  /** A `session.update` sent upstream with `eventId`. */
  sent(eventId: string, session: unknown): void {
    this.updates.sent(eventId, session);
  }

  /** `session.created` (`answers` false) or `session.updated`: the session as the upstream has it. */
  confirmed(session: unknown, answers: boolean): void {
    this.confirmedCap = this.updates.confirmed(session, answers) ?? this.confirmedCap;
  }

  /** An upstream `error` naming `eventId`: that update was not applied. */
  refused(eventId: string): void {
    this.updates.refused(eventId);
  }

  /** What a hold assumes: the confirmed cap, loosened by any update the upstream may still apply. */
  forHold(): Cap {
    let cap = this.confirmedCap;
    for (const stated of this.updates.unanswered()) if (stated !== undefined) cap = looser(cap, stated);
    return cap;
  }
}

/**
 * Whether `echoed` (a `response.created`'s response) runs under a looser cap than `heldCap`:
 * then it is not the response that hold was made for (server VAD started it while the client's
 * create was queued), and it needs a hold of its own. An echo without a cap says nothing.
 */
export function outgrowsHold(heldCap: Cap, echoed: unknown): boolean {
  const echo = statedCap(echoed);
  return echo !== undefined && echo !== heldCap && looser(echo, heldCap) === echo;
}

/**
 * The output ceiling a response's bill is held to once its `response.created` arrives: the cap
 * its hold assumed when the upstream echoes exactly that number, else `unbounded` (the upstream's
 * report believed up to the ceiling of any answer).
 */
export function billedCeiling(heldCap: Cap, echoed: unknown, unbounded: number): number {
  const echo = statedCap(echoed);
  return typeof heldCap === 'number' && echo === heldCap ? heldCap : unbounded;
}
