/**
 * The HTTP face of /v1/realtime. The WebSocket itself is served on the upgrade
 * (realtime/server.ts); a plain GET is told to upgrade, and the WebRTC forms, whose media
 * would flow between the browser and the provider where the gateway cannot meter or limit
 * it, are refused with the reason.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors.ts';
import { accessibleRoute } from '../../pipeline/context.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import {
  betaAnswer,
  betaMintRequest,
  gaAnswer,
  MAX_SECRETS_PER_KEY,
  mintRequest,
  newSecret,
  type MintRequest,
} from '../../realtime/secrets.ts';
import { admitRealtime } from '../../realtime/admission.ts';
import type { RealtimeProxy } from '../../realtime/server.ts';
import { servesRealtime } from '../../realtime/upstream.ts';
import { hashKey } from '../auth.ts';
import type { RouteHooks } from './hooks.ts';

declare module 'fastify' {
  interface FastifyInstance {
    realtime: RealtimeProxy;
  }
}

const webrtc = (path: string): GatewayError =>
  new GatewayError(
    'unsupported_endpoint',
    `POST ${path} (a WebRTC SDP offer) is not served: media over WebRTC would bypass the gateway's metering and limits; ` +
      'connect a WebSocket to GET /v1/realtime?model=<model> instead',
  );

type Answer = (value: string, expiresAt: number, model: string, session: Record<string, unknown>) => object;

/**
 * Mints a client secret for a model the key may open: stored by its hash with the key's
 * identity, the model and the session configuration, for `/v1/realtime` to honour.
 * Minting is admitted like a request (one on the rate limit; a key whose budget is spent is
 * refused) but charges nothing; the sessions it opens are charged to the minting key.
 */
export function realtimeRoutes(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  const mint =
    (parse: (body: unknown) => MintRequest, answer: Answer) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const ctx = hooks.context(request, reply);
      const req = parse(request.body);
      const route = accessibleRoute(ctx, req.model);
      if (!servesRealtime(route))
        throw new GatewayError(
          'invalid_request_error',
          `model ${req.model} does not support /v1/realtime (no deployment has the realtime capability on a provider that speaks the protocol)`,
          { param: 'model' },
        );
      await admitRealtime(deps, ctx, route);
      const value = newSecret();
      const expiresAt = Date.now() + req.seconds * 1000;
      const stored = await deps.stores.realtimeSecrets.put(
        hashKey(value).toString('hex'),
        {
          tenant: ctx.tenant.name,
          keyId: ctx.key.id,
          keyHash: ctx.key.hash.toString('hex'),
          model: req.model,
          session: req.session,
          expiresAt,
        },
        MAX_SECRETS_PER_KEY,
      );
      if (!stored)
        throw new GatewayError(
          'rate_limit_exceeded',
          `this key already holds ${MAX_SECRETS_PER_KEY} unexpired Realtime client secrets, the most one key may hold; ` +
            'use one or wait for one to expire',
        );
      return answer(value, expiresAt, req.model, req.session);
    };
  app.post('/v1/realtime/client_secrets', mint(mintRequest, gaAnswer));
  app.post('/v1/realtime/sessions', mint(betaMintRequest, betaAnswer));

  app.get('/v1/realtime', async () => {
    throw new GatewayError(
      'invalid_request_error',
      '/v1/realtime is a WebSocket endpoint: connect with Upgrade: websocket and ?model=<model>',
      { status: 426, headers: { upgrade: 'websocket', connection: 'Upgrade' } },
    );
  });
  // WebRTC bodies are SDP text: accepted unparsed (in this scope only) so the answer is the reason, not a 415.
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/sdp', { parseAs: 'string' }, (_req, body, done) =>
      done(null, body),
    );
    scope.post('/v1/realtime', async () => {
      throw webrtc('/v1/realtime');
    });
    scope.post('/v1/realtime/calls', async () => {
      throw webrtc('/v1/realtime/calls');
    });
  });
}
