/**
 * Opening the upstream Realtime socket of one deployment. Failures are classified like any
 * upstream call, so the router fails over to the next deployment exactly as for HTTP.
 */
import WebSocket from 'ws';
import type { Deployment, ModelRoute } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import type { UpstreamErrorKind, UpstreamTarget } from '../providers/types.ts';
import type { ClientSignal } from '../router/client-signal.ts';
import { UpstreamFailure } from '../router/upstream.ts';

/** OpenAI's GA path below the deployment's base URL (`…/v1`); Azure's v1 API under `/openai/v1`. */
export function realtimeUrl(target: UpstreamTarget): string {
  const base = target.provider === 'azure-openai' ? `${target.baseUrl}/openai/v1` : target.baseUrl;
  const url = new URL(`${base}/realtime`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('model', target.upstreamModel);
  return url.toString();
}

export function realtimeHeaders(target: UpstreamTarget): Record<string, string> {
  if (target.apiKey === undefined) return {};
  return target.provider === 'azure-openai'
    ? { 'api-key': target.apiKey }
    : { authorization: `Bearer ${target.apiKey}` };
}

export function statusKind(status: number): UpstreamErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 503 || status === 529) return 'overloaded';
  if (status >= 500) return 'server';
  return 'bad_request';
}

/** Speakers of OpenAI's wire: the only providers with this protocol. */
const REALTIME_PROVIDERS = new Set(['openai', 'openai-compatible', 'azure-openai']);

/**
 * A deployment that can carry a Realtime session: the capability on a provider that speaks the
 * protocol. The capability on any other provider is a configuration slip, not a provider fault:
 * such deployments are never routed to, so they never count against their health.
 */
export const speaksRealtime = (d: Deployment): boolean =>
  d.capabilities.has('realtime') && REALTIME_PROVIDERS.has(d.provider);

/** Whether any of the model's deployments can carry a Realtime session. */
export const servesRealtime = (route: ModelRoute): boolean => route.deployments.some(speaksRealtime);

export function openUpstream(
  d: Deployment,
  headers: Readonly<Record<string, string>>,
  maxPayload: number,
  signal: ClientSignal,
): Promise<WebSocket> {
  // Routing filters these out; should one get here, it is the gateway's own (configuration) error,
  // which the router never charges to the deployment's health.
  if (!REALTIME_PROVIDERS.has(d.provider))
    return Promise.reject(
      new GatewayError(
        'internal_error',
        `deployment ${d.name}: ${d.provider} deployments do not speak the Realtime protocol`,
      ),
    );
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(realtimeUrl(d.target), {
      headers: { ...headers, ...realtimeHeaders(d.target) },
      handshakeTimeout: d.timeouts.connectMs + d.timeouts.headersMs,
      // The upstream's events can be large (a whole audio response in one `response.done`).
      maxPayload: Math.max(maxPayload, 64 * 1024 * 1024),
    });
    const fail = (failure: UpstreamFailure) => {
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.terminate();
      reject(failure);
    };
    const onAbort = () => fail(new UpstreamFailure({ kind: 'network', status: 0, message: 'client left' }));
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('open', () => {
      // Nothing is read until the session is wired to the client: `session.created` comes at once.
      socket.pause();
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners('unexpected-response');
      resolve(socket);
    });
    socket.once('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      const retryAfter = Number(res.headers['retry-after']);
      res.resume();
      fail(
        new UpstreamFailure({
          kind: statusKind(status),
          status,
          message: `upstream refused the Realtime connection with HTTP ${status}`,
          retryAfterMs: Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined,
        }),
      );
    });
    socket.once('error', (err) => {
      const timeout = /timed out|timeout/i.test(err.message);
      fail(new UpstreamFailure({ kind: timeout ? 'timeout' : 'network', status: 0, message: err.message }));
    });
  });
}
