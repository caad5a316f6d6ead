/**
 * `session.update`s the upstream has not answered yet, each with what it states of one setting.
 * The upstream answers updates in order, each with `session.updated` (the whole session as it
 * now has it) or an `error` naming the update's event id; `session.created` answers none. The
 * session's output cap and its prompt are both read this way (output-cap.ts, prompt-count.ts).
 */
export class SessionUpdates<S> {
  private readonly pending: { eventId: string; stated: S }[] = [];

  /** `state` reads what a session object says of the setting. */
  constructor(private readonly state: (session: unknown) => S) {}

  /** A `session.update` sent upstream with `eventId`. */
  sent(eventId: string, session: unknown): void {
    this.pending.push({ eventId, stated: this.state(session) });
  }

  /**
   * `session.created` (`answers` false) or `session.updated`: what the session the upstream
   * echoes states; an update it answers is no longer pending.
   */
  confirmed(session: unknown, answers: boolean): S {
    if (answers) this.pending.shift();
    return this.state(session);
  }

  /** An upstream `error` naming `eventId`: that update was not applied. */
  refused(eventId: string): void {
    const at = this.pending.findIndex((p) => p.eventId === eventId);
    if (at !== -1) this.pending.splice(at, 1);
  }

  /** What the updates still unanswered state, oldest first. */
  unanswered(): S[] {
    return this.pending.map((p) => p.stated);
  }
}
