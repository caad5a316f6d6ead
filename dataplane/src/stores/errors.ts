/**
 * The one failure callers must handle from any store: the backing service cannot be reached
 * (connection refused or lost, command timeout, server loading). Money and limit stages fail
 * closed on it with a 503; stages that fail open just skip their work.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** Which store operation failed, e.g. `budget.reserve`. */
  readonly operation: string;

  constructor(operation: string, cause?: unknown) {
    const why = cause instanceof Error ? cause.message : cause === undefined ? 'unavailable' : String(cause);
    super(`store unavailable during ${operation}: ${why}`, { cause });
    this.operation = operation;
  }
}

export const isStoreUnavailable = (err: unknown): err is StoreUnavailableError =>
  err instanceof StoreUnavailableError;
