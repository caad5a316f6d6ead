/**
 * How long the listeners wait for a client, and how many clients each holds. A request
 * not fully received in time is answered 408 and its connection closed by Node itself.
 */
import { MAX_MODEL_NAME_CHARS } from './model-name.ts';

export interface ConnectionLimits {
  /** Headers and body must have arrived within this many ms of the request's start. */
  receiveTimeoutMs: number;
  /** Headers alone must have arrived within this (never more than receiveTimeoutMs). */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Open client connections at most; beyond it the least active unproductive one is closed. */
  maxConnections: number;
  /** The same bound for the admin port (probes, metrics scrapes), on its own count. */
  adminMaxConnections: number;
  /** Requests one connection may have unanswered (pipelined); past it, a 429 without work. */
  maxPipelinedRequests: number;
}

/**
 * Longest path parameter the router takes (Fastify's maxParamLength; 414 beyond). The same as a
 * model name's bound: an A2A agent is named in the path, and ids are far shorter.
 */
export const MAX_PATH_PARAM_CHARS = MAX_MODEL_NAME_CHARS;

/** Largest request body, bytes. */
export const DEFAULT_BODY_LIMIT = 32 * 1024 * 1024;

export const DEFAULT_LIMITS: ConnectionLimits = {
  receiveTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  // Above the 60 s idle timeout of common load balancers (ALB, nginx), so the balancer
  // closes an idle connection first and never sends a request onto one being closed here.
  keepAliveTimeoutMs: 65_000,
  maxConnections: 10_000,
  // Probes and scrapes open a handful at a time: far above that, far below any file limit.
  adminMaxConnections: 100,
  // Far above what pipelining clients keep in flight (undici's pipelining option, proxies),
  // far below what would let one connection stand for thousands.
  maxPipelinedRequests: 32,
};

export interface NodeServerTimeouts {
  requestTimeout: number;
  headersTimeout: number;
  keepAliveTimeout: number;
  /** How often Node checks the two timeouts above; its 30 s default would double a 30 s limit. */
  connectionsCheckingInterval: number;
}

export function nodeServerTimeouts(limits: ConnectionLimits): NodeServerTimeouts {
  const headersTimeout = Math.min(limits.headersTimeoutMs, limits.receiveTimeoutMs);
  return {
    requestTimeout: limits.receiveTimeoutMs,
    headersTimeout,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Enforced within a tenth of the limit, checked no more than 10 times a second.
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 10))),
  };
}
