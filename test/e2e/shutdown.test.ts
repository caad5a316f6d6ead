/**
 * SIGTERM on a real gateway process: readiness fails at once, new connections are still
 * served through the pre-stop window, a running stream finishes within the drain deadline,
 * and a stream longer than the deadline ends with an SSE error event, never a silent cut.
 */
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer, startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { spawnGateway, until, type GatewayProcess } from '../harness/gateway-spawn.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';

const KEY = 'sk-test-shutdown';
const PROMPT = 'tell me something slowly';

let fake: FakeProvider;
let gw: GatewayProcess | undefined;
const config = () =>
  [
    deployment({ name: 'gpt', model: 'gpt-4o-mini', baseUrl: fakeBase(fake.url) }),
    tenant('acme'),
    apiKey('k', KEY, 'acme'),
  ].join('');

beforeAll(async () => {
  fake = await startFakeProvider({ port: 0 });
});
afterAll(() => fake.close());
afterEach(async () => {
  await gw?.kill();
  fake.reset();
});

const chatBody = (stream: boolean, content = PROMPT) =>
  JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content }] });

/** A stream request; resolves once its first bytes arrived, with a reader for the rest. */
async function startStream(
  url: string,
  path = '/v1/chat/completions',
  body = chatBody(true),
): Promise<{ rest: () => Promise<string> }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });
  return {
    // Throws if the body is cut without its proper end.
    async rest() {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

/** A non-stream request on a connection of its own (no pooled keep-alive socket). */
function freshRequest(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/chat/completions`,
      {
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(chatBody(false, 'during pre-stop'));
  });
}

const readyStatus = async (adminUrl: string): Promise<number> => (await fetch(`${adminUrl}/readyz`)).status;

const contentOf = (sse: string): string =>
  sse
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => (JSON.parse(e.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices)
    .map((c) => c?.[0]?.delta?.content ?? '')
    .join('');

describe('graceful shutdown on SIGTERM', () => {
  it(
    'fails readiness at once, serves new connections during pre-stop, lets a stream finish',
    { timeout: 60_000 },
    async () => {
      const preStopMs = 1_500;
      const drainMs = 8_000;
      gw = await spawnGateway(config(), [
        '--pre-stop-ms',
        String(preStopMs),
        '--drain-timeout-ms',
        String(drainMs),
      ]);
      // About 14 chunks, 200 ms apart: the stream outlives the pre-stop window.
      fake.setFaults([{ match: { stream: true }, fault: { type: 'slow-stream', chunkDelayMs: 200 } }]);
      const stream = await startStream(gw.url);

      const signalled = Date.now();
      gw.child.kill('SIGTERM');
      const adminUrl = gw.adminUrl;
      await until(async () => (await readyStatus(adminUrl)) === 503, 1_000);
      expect(Date.now() - signalled).toBeLessThan(1_000);

      // Load balancers may still send traffic: a new connection is accepted and served.
      expect(await freshRequest(gw.url)).toBe(200);
      expect(Date.now() - signalled).toBeLessThan(preStopMs);

      const body = await stream.rest();
      const elapsed = Date.now() - signalled;
      expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(contentOf(body)).toBe(fakeAnswer(PROMPT));
      expect(elapsed).toBeGreaterThan(preStopMs);
      expect(elapsed).toBeLessThan(preStopMs + drainMs);
      expect(await gw.exited).toBe(0);
    },
  );

  it(
    'ends a stream still open at the drain deadline with an SSE error event, and a waiting request with a 503',
    { timeout: 60_000 },
    async () => {
      const preStopMs = 300;
      const drainMs = 1_500;
      gw = await spawnGateway(config(), [
        '--pre-stop-ms',
        String(preStopMs),
        '--drain-timeout-ms',
        String(drainMs),
      ]);
      fake.setFaults([
        // About 14 s of stream: far longer than pre-stop plus drain.
        {
          match: { stream: true },
          fault: { type: 'slow-stream', chunkDelayMs: 1_000, firstChunkDelayMs: 0 },
        },
        // A non-stream answer that never comes.
        { match: { stream: false }, fault: { type: 'hang' } },
      ]);
      const stream = await startStream(gw.url);
      const responses = await startStream(
        gw.url,
        '/v1/responses',
        JSON.stringify({ model: 'gpt-4o-mini', stream: true, input: PROMPT }),
      );
      const waiting = fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: chatBody(false, 'never answered'),
      });
      await until(() => fake.requests.length === 3);

      const signalled = Date.now();
      gw.child.kill('SIGTERM');
      // The body ends properly (a cut would make the reader throw) with an error event last.
      const body = await stream.rest();
      const elapsed = Date.now() - signalled;
      const last = body.trimEnd().split('\n\n').at(-1)!;
      expect(last.startsWith('data: ')).toBe(true);
      const event = JSON.parse(last.slice(6)) as { error?: { type: string; code: number; message: string } };
      expect(event.error).toMatchObject({ type: 'service_unavailable', code: 503 });
      expect(event.error!.message).toMatch(/shutting down/);
      expect(body).not.toContain('[DONE]');
      expect(elapsed).toBeGreaterThanOrEqual(preStopMs + drainMs - 100);
      expect(elapsed).toBeLessThan(preStopMs + drainMs + 3_000);

      // The Responses API's stream says the same in its own events.
      const events = (await responses.rest()).trimEnd().split('\n\n');
      const error = events.find((e) => e.startsWith('event: error'));
      expect(error).toMatch(/shutting down/);
      expect(events.at(-1)).toMatch(/^event: response\.failed/);

      const res = await waiting;
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: { type: 'service_unavailable', code: 503 } });
      expect(await gw.exited).toBe(0);
    },
  );
});
