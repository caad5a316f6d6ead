/**
 * Whose fault a failed attempt is, with the real OpenAI adapter and a real HTTP server on
 * loopback: what the upstream answered is judged against the deployment, what the gateway
 * itself threw while preparing the call is not.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../config/snapshot.ts';
import type { ChatRequest } from '../formats/openai/types.ts';
import { adapters } from '../providers/index.ts';
import { chatCall } from './calls.ts';
import { HealthRegistry } from './health.ts';
import { DEFAULT_RETRY } from './policy.ts';
import { Router } from './router.ts';
import { testDeployment, testTarget } from './testing.ts';
import { UpstreamClient, UpstreamFailure } from './upstream.ts';

type Answer = (res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let answer: Answer;
let received: number;
const upstream = new UpstreamClient();

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await upstream.close();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  received = 0;
});

const deployment = () => testDeployment({ name: 'd', target: testTarget({ baseUrl }) });
const ask: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
/** Nested far deeper than JSON.stringify can serialise. */
const tooDeep = (): ChatRequest => ({
  ...ask,
  metadata: { x: JSON.parse('['.repeat(20_000) + ']'.repeat(20_000)) as unknown },
});

const call = (req: ChatRequest) =>
  chatCall(
    {
      upstream,
      adapter: adapters.openai,
      deployment: deployment(),
      signal: new AbortController().signal,
      deadline: Date.now() + 5_000,
    },
    req,
  );

const json =
  (body: string): Answer =>
  (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  };

describe('chatCall blames the deployment only for its answer', () => {
  it('a 2xx the adapter cannot read is a server fault of the deployment', async () => {
    answer = json('{"object":"nothing here"}');
    const err = await call(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).upstream).toMatchObject({
      kind: 'server',
      message: 'invalid upstream response: upstream chat response has no choices',
    });
  });

  it('a body that breaks off is a network fault of the deployment', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"choices":[');
      setImmediate(() => res.destroy());
    };
    const err = await call(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).upstream.kind).toBe('network');
  });

  it('a throw while building the request is the gateway’s own: not an UpstreamFailure, nothing sent', async () => {
    answer = json('{"choices":[]}');
    const err = await call(tooDeep()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RangeError);
    expect(received).toBe(0);
  });
});

describe('through the router', () => {
  const snapshotOf = (): Snapshot => {
    const d = deployment();
    return {
      version: 1,
      source: 'test',
      loadedAt: new Date(0),
      models: new Map([
        [
          'm',
          { model: 'm', deployments: [d], fallbacks: [], capabilities: d.capabilities, ownedBy: 'openai' },
        ],
      ]),
      keys: new Map(),
      tenants: new Map(),
    };
  };
  const route = (health: HealthRegistry, req: ChatRequest) =>
    new Router({
      health,
      observer: { attempt: () => undefined },
      retry: { ...DEFAULT_RETRY, maxSameRetries: 0 },
    }).execute(
      {
        model: 'm',
        snapshot: snapshotOf(),
        allowed: () => true,
        needs: ['chat'],
        signal: new AbortController().signal,
        deadline: Date.now() + 5_000,
      },
      (d) =>
        chatCall(
          {
            upstream,
            adapter: adapters.openai,
            deployment: d,
            signal: new AbortController().signal,
            deadline: Date.now() + 5_000,
          },
          req,
        ),
    );

  it('twenty local stack overflows leave the circuit closed; one bad answer opens it', async () => {
    const health = new HealthRegistry({ failureThreshold: 1, baseOpenMs: 60_000, maxOpenMs: 60_000 });
    answer = json(
      '{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}',
    );
    for (let i = 0; i < 20; i++) {
      const err = await route(health, tooDeep()).catch((e: unknown) => e);
      expect(err).toMatchObject({ type: 'internal_error', status: 500 });
    }
    expect(health.circuitState('d')).toBe('closed');
    expect(health.view(deployment()).inflight).toBe(0);
    await expect(route(health, ask)).resolves.toMatchObject({ log: { attempts: 1 } });

    // The same registry does open on a real fault, so the check above could fail.
    answer = json('{"object":"nothing here"}');
    await expect(route(health, ask)).rejects.toMatchObject({ type: 'upstream_error' });
    expect(health.circuitState('d')).toBe('open');
  });
});
