/**
 * How much of a client the gateway reads. The client socket is paused while any of three
 * reasons holds, and read again once none does: the upstream is not taking what the client
 * sends (its backlog), the client is not reading what the gateway answers it (its own backlog
 * of error events: refusing costs the client nothing, so it must cost it its reading), or the
 * client's events are waiting in the session's queue (a `response.create` waiting for a slow
 * budget hold keeps every later event in memory until it is decided). And a client whose
 * events are refused over and over is closed: nothing it sends is being served.
 */
import { HIGH_WATER_BYTES, LOW_WATER_BYTES, type Reader } from './relay.ts';

/** Refused client events in a row (none forwarded between them) that close the session, 1008. */
export const MAX_REFUSALS_IN_A_ROW = 100;

export type PauseReason = 'upstream-backlog' | 'own-backlog' | 'queue';

export class ClientFlow {
  private readonly held = new Set<PauseReason>();
  private queuedChars = 0;
  private refusedInARow = 0;
  private forwardedCount = 0;
  private excusedEvent = false;

  constructor(
    private readonly socket: Reader,
    private readonly high = HIGH_WATER_BYTES,
    private readonly low = LOW_WATER_BYTES,
  ) {}

  /** Whether the client is being read. */
  get paused(): boolean {
    return this.held.size > 0;
  }

  /** Characters of client events received and not yet handled. */
  get queued(): number {
    return this.queuedChars;
  }

  /** One reason's switch, in the shape `relay` pauses and resumes a source through. */
  reader(reason: PauseReason): Reader {
    const held = this.held;
    return {
      get isPaused() {
        return held.has(reason);
      },
      pause: () => this.hold(reason),
      resume: () => this.release(reason),
    };
  }

  private hold(reason: PauseReason): void {
    this.held.add(reason);
    if (!this.socket.isPaused) this.socket.pause();
  }

  private release(reason: PauseReason): void {
    if (this.held.delete(reason) && this.held.size === 0) this.socket.resume();
  }

  /** A client event arrived and waits its turn. */
  arrived(chars: number): void {
    this.queuedChars += chars;
    if (this.queuedChars > this.high) this.hold('queue');
  }

  /** Something the client sent went upstream: its run of refusals is over. */
  forwarded(): void {
    this.forwardedCount++;
  }

  /**
   * The event being handled was refused for no fault of this client (the key's scanning was
   * spent by its other users): it neither counts toward the run of refusals nor ends it.
   */
  excused(): void {
    this.excusedEvent = true;
  }

  /**
   * Handles one queued event with `handle`; true when it ends a run of
   * MAX_REFUSALS_IN_A_ROW refusals, and the session is to be closed.
   */
  async handled(chars: number, handle: () => Promise<void>): Promise<boolean> {
    const before = this.forwardedCount;
    this.excusedEvent = false;
    try {
      await handle();
    } finally {
      this.queuedChars -= chars;
      if (this.queuedChars < this.low) this.release('queue');
    }
    if (this.forwardedCount !== before) this.refusedInARow = 0;
    else if (!this.excusedEvent) this.refusedInARow++;
    return this.refusedInARow >= MAX_REFUSALS_IN_A_ROW;
  }
}
