/**
 * What a failed Milvus call means to the caller. Transport failures (server down, hung,
 * restarting) become StoreUnavailableError, on which the cache fails open; a reply that
 * carries an error status (a schema or request problem: a bug or a misconfigured collection)
 * becomes MilvusRequestError. The cache fails open on both; the metric tells them apart.
 */
import { StoreUnavailableError } from '../../errors.ts';

export class MilvusRequestError extends Error {
  override readonly name = 'MilvusRequestError';
  constructor(
    readonly operation: string,
    readonly errorCode: string,
    reason: string,
  ) {
    super(`milvus ${operation} failed: ${errorCode} ${reason}`);
  }
}

/** gRPC status codes that mean "not reachable now": CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE. */
const TRANSPORT_CODES = new Set([1, 2, 4, 8, 13, 14]);
const TRANSPORT_TEXT =
  /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|UNAVAILABLE|DEADLINE|No connection|socket|closed|timed? ?out/i;

export function toMilvusError(operation: string, err: unknown): Error {
  if (err instanceof StoreUnavailableError || err instanceof MilvusRequestError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if ((typeof code === 'number' && TRANSPORT_CODES.has(code)) || TRANSPORT_TEXT.test(message))
    return new StoreUnavailableError(operation, err);
  return err instanceof Error ? err : new Error(message);
}

interface StatusLike {
  error_code?: string | number;
  code?: number;
  reason?: string;
}

/** Milvus answers most failures with a status, not a gRPC error; this turns one into a throw. */
export function checkStatus(operation: string, status: StatusLike | undefined): void {
  if (!status) return;
  const ok = status.error_code === undefined || status.error_code === 'Success' || status.error_code === 0;
  if (ok && (status.code === undefined || status.code === 0)) return;
  throw new MilvusRequestError(operation, String(status.error_code ?? status.code), status.reason ?? '');
}
