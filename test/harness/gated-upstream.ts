/**
 * A minimal OpenAI-compatible upstream whose answers wait until the test opens its gate, so a
 * request can be admitted (its budget held) and then finish while Redis is down. Every answer
 * is 10 prompt + 20 completion tokens.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GatedUpstream {
  url: string;
  /** Resolves once `n` requests are waiting at the gate. */
  waiting(n: number): Promise<void>;
  open(): void;
  close(): Promise<void>;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export async function startGatedUpstream(): Promise<GatedUpstream> {
  let gate = deferred();
  let held = 0;
  let watchers: { n: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      held += 1;
      watchers = watchers.filter((w) => (held >= w.n ? (w.resolve(), false) : true));
      void gate.promise.then(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `chatcmpl-${randomUUID()}`,
            object: 'chat.completion',
            created: 0,
            model: 'g',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
          }),
        );
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    waiting: (n) =>
      held >= n ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ n, resolve })),
    open() {
      gate.resolve();
      gate = deferred();
      held = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
