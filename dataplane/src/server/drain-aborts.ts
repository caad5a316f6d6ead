/**
 * The requests the shutdown drain deadline must cut, in a set: one listener on the shutdown
 * signal aborts them all. A listener per request on the signal cost an add and a remove on an
 * EventTarget each, and both walk its whole listener list (every request in flight).
 */
/** A request's abort: an AbortController, or the cheaper RequestAbort HTTP requests get. */
export interface Abortable {
  abort(reason?: unknown): void;
}

export class DrainAborts {
  private readonly live = new Set<Abortable>();

  constructor(private readonly shutdown: AbortSignal) {
    shutdown.addEventListener(
      'abort',
      () => {
        for (const c of this.live) c.abort(shutdown.reason);
        this.live.clear();
      },
      { once: true },
    );
  }

  /** Aborts `controller` at the drain deadline (at once if it has passed); returns the release. */
  track(controller: Abortable): () => void {
    if (this.shutdown.aborted) {
      controller.abort(this.shutdown.reason);
      return () => undefined;
    }
    this.live.add(controller);
    return () => void this.live.delete(controller);
  }

  get size(): number {
    return this.live.size;
  }
}
