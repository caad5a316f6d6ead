/**
 * The HTTP face of /v1/realtime. The WebSocket itself is served on the upgrade
 * (realtime/server.ts); a plain GET is told to upgrade, and the WebRTC forms, whose media
 * would flow between the browser and the provider where the gateway cannot meter or limit
 * it, are refused with the reason.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors.ts';
import type { RealtimeProxy } from '../../realtime/server.ts';

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

export function realtimeRoutes(app: FastifyInstance): void {
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
