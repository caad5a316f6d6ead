/**
 * The client's side of a request's abort: what every upstream call listens to. An AbortSignal
 * has all of it, so tests and callers with their own controller pass one as is; an HTTP
 * request gets a `RequestAbort`, which costs a plain object instead of an AbortController,
 * its EventTarget and an EventTarget listener per upstream attempt (~3 % of a default chat
 * request's CPU, docs/decisions.md, issue 15).
 */
export interface ClientSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Every listener is called at most once: a signal aborts once. */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * Aborted once, with a reason; listeners run in the order they were added. Also each upstream
 * attempt's signal for undici, which takes any object with these members.
 */
export class RequestAbort implements ClientSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const list = this.listeners;
    if (!list) return;
    const at = list.lastIndexOf(listener);
    if (at !== -1) list.splice(at, 1);
  }

  /** Without a reason, the AbortError an AbortController's `abort()` would give. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const list = this.listeners;
    this.listeners = undefined;
    for (const listener of list ?? []) {
      try {
        listener();
      } catch (err) {
        // As an EventTarget does: one failing listener neither stops the others nor the caller.
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }
}
