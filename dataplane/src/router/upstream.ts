/**
 * The only place that speaks HTTP to providers (undici). One Agent per origin+connect
 * timeout, reused across requests; every response body is consumed or destroyed so the
 * pool never stalls on a failover path.
 */
import { Agent, type Dispatcher } from 'undici';
import type { RawUpstreamRequest, UpstreamError } from '../providers/types.ts';
import { RequestAbort, type ClientSignal } from './client-signal.ts';
import { Deadlines } from './deadlines.ts';

export interface CallTimeouts {
  connectMs: number;
  headersMs: number;
  /** Max silence while reading the body. */
  bodyMs: number;
  /** Whole call, including the body; undefined for streams. */
  totalMs: number | undefined;
  /**
   * Streams: headers must arrive within this. It runs on Gantry's own deadline because
   * undici's headers timeout is coarse (it may fire up to a second late); see deadlines.ts
   * for how precise that is.
   */
  firstTokenMs?: number | undefined;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

/** The caller went away: stop, do not fail over, do not blame the deployment. */
export class ClientAbortError extends Error {
  /** True when the upstream connection had failed too: nothing of the request reached it. */
  constructor(readonly unsent = false) {
    super('client closed the request');
    this.name = 'ClientAbortError';
  }
}

/** A failed upstream call, classified for the router (transport error, HTTP error or broken stream). */
export class UpstreamFailure extends Error {
  constructor(
    readonly upstream: UpstreamError,
    /**
     * The provider answered with a non-2xx status (sendOk): it refused the call, and a refusal
     * is billed by no provider (429, 4xx, 5xx alike), so a client leaving then owes nothing.
     */
    readonly refused = false,
  ) {
    super(upstream.message);
    this.name = 'UpstreamFailure';
  }
}

const ERROR_BODY_LIMIT = 64 * 1024;

/** Upstream URLs parsed at most this many at a time (a process calls a handful). */
const MAX_PARSED_URLS = 1024;

export class UpstreamClient {
  private readonly agents = new Map<string, Agent>();
  /** Origin and path of each URL called, parsed once (undici's request() parses it every call). */
  private readonly targets = new Map<string, { origin: string; path: string }>();
  /** Each attempt's time limit; long ones share one coarse tick instead of a timer each. */
  private readonly deadlines = new Deadlines();

  private target(url: string): { origin: string; path: string } {
    let t = this.targets.get(url);
    if (!t) {
      // The URL parser's normalisation, exactly as undici's request(url) applies it.
      const u = new URL(url);
      t = { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname };
      if (this.targets.size >= MAX_PARSED_URLS) this.targets.clear();
      this.targets.set(url, t);
    }
    return t;
  }

  /** One pool per origin and connect timeout; the URL is parsed only when a pool is created. */
  private agent(url: string, connectMs: number): Agent {
    const slash = url.indexOf('/', url.indexOf('//') + 2);
    const key = `${slash === -1 ? url : url.slice(0, slash)}|${connectMs}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new Agent({
        connect: { timeout: connectMs },
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 300_000,
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  async send(
    req: RawUpstreamRequest,
    timeouts: CallTimeouts,
    clientSignal: ClientSignal,
  ): Promise<UpstreamResponse> {
    if (clientSignal.aborted) throw new ClientAbortError();
    // One plain abort object and one deadline per attempt: it carries the reasons an
    // AbortController would (so failures classify the same) at a fraction of the cost of one,
    // or of an EventEmitter.
    const controller = new RequestAbort();
    const onClientAbort = () => controller.abort(clientSignal.reason);
    clientSignal.addEventListener('abort', onClientAbort, { once: true });
    const limitMs = timeouts.totalMs ?? timeouts.firstTokenMs;
    const disarm =
      limitMs === undefined
        ? undefined
        : this.deadlines.arm(limitMs, () =>
            controller.abort(new DOMException('upstream attempt timed out', 'TimeoutError')),
          );
    const release = () => {
      disarm?.();
      clientSignal.removeEventListener('abort', onClientAbort);
    };
    try {
      const { origin, path } = this.target(req.url);
      const res = await this.agent(req.url, timeouts.connectMs).request({
        origin,
        path,
        method: req.method,
        headers: req.headers,
        body: req.body,
        // undici takes any object with `aborted`, `reason` and add/removeEventListener
        // (core/util.js addAbortListener); its types name only AbortSignal and EventEmitter.
        signal: controller as unknown as AbortSignal,
        headersTimeout: timeouts.headersMs,
        bodyTimeout: timeouts.bodyMs,
      });
      // A stream's first-token wait goes on in the reader, on its own deadline.
      if (timeouts.totalMs === undefined) disarm?.();
      // The client's abort must reach the body too: a stream is read long after the headers.
      res.body.once('close', release);
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      release();
      throw classifyUpstreamFailure(err, clientSignal);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
    this.agents.clear();
  }
}

/** Read an error body, bounded; the body is always consumed. */
export async function readErrorBody(body: UpstreamResponse['body']): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      if (text.length < ERROR_BODY_LIMIT) text += (chunk as Buffer).toString('utf8');
    }
  } catch {
    // a broken error body still tells us the status
  }
  return text.slice(0, ERROR_BODY_LIMIT);
}

export function classifyUpstreamFailure(err: unknown, clientSignal: ClientSignal): Error {
  if (err instanceof ClientAbortError || err instanceof UpstreamFailure) return err;
  const e = err as { code?: string; name?: string; message?: string };
  if (clientSignal.aborted) return new ClientAbortError(e.code !== undefined && NEVER_CONNECTED.has(e.code));
  const timeout =
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    (e.name === 'AbortError' && !clientSignal.aborted);
  const message = timeout
    ? `upstream timed out (${e.code ?? e.name})`
    : `upstream connection failed (${e.code ?? e.message})`;
  const failure: UpstreamError = { kind: timeout ? 'timeout' : 'network', status: 0, message };
  if (e.code !== undefined && NEVER_CONNECTED.has(e.code)) failure.unsent = true;
  return new UpstreamFailure(failure);
}

/** Errors that mean no connection was made, so nothing of the request reached the upstream. */
const NEVER_CONNECTED: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
