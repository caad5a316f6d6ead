/**
 * The probe endpoints kubelet calls (`/healthz`, `/readyz`) on their own port, so they
 * answer even when the API server is slow. Nothing else is served there.
 */
import { createServer, type Server } from 'node:http';
import { liveness, readiness, type HealthFacts, type ProbeAnswer } from './verdict.ts';

export function startHealthServer(port: number, facts: () => Omit<HealthFacts, 'now'>): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const probe = path === '/healthz' ? liveness : path === '/readyz' ? readiness : undefined;
    const answer: ProbeAnswer = probe
      ? probe({ ...facts(), now: Date.now() })
      : { ok: false, reason: `no route ${path}` };
    res.writeHead(probe ? (answer.ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: answer.ok ? 'ok' : 'failing', reason: answer.reason }));
  });
  // Probes are tiny; a client that dawdles is cut off rather than held.
  server.requestTimeout = 5_000;
  server.headersTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve(server));
  });
}
