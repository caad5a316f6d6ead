/**
 * The fake provider server: one node:http server speaking OpenAI, Azure OpenAI, Anthropic
 * and Gemini, with faults injectable per request. Plain node:http so it can misbehave at the
 * socket level (hang, reset, cut a stream) the way a real upstream does.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agentsRoute } from './agents.ts';
import { anthropicRoute } from './anthropic.ts';
import { isRecord } from './behaviour.ts';
import { FaultBook, parseRules } from './faults.ts';
import { geminiRoute } from './gemini.ts';
import { openaiError, requestIdHeaders } from './openai-errors.ts';
import { openaiRoute } from './openai-routes.ts';
import { attachRealtime } from './realtime.ts';
import { isMultipart, parseMultipart } from './multipart.ts';
import {
  letGo,
  readRaw,
  sendError,
  sendRaw,
  sendJson,
  sleep,
  untilClosed,
  untilReleased,
  writeStream,
  type Held,
} from './transport.ts';
import type { FakeProvider, FaultRule, RecordedRequest, Route } from './types.ts';

export interface FakeProviderOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Added before the headers of every provider answer. */
  latencyMs?: number;
}

function findRoute(method: string, pathname: string): Route | undefined {
  return (
    geminiRoute(method, pathname) ??
    anthropicRoute(method, pathname) ??
    agentsRoute(method, pathname) ??
    openaiRoute(method, pathname)
  );
}

interface State {
  requests: RecordedRequest[];
  abandoned: number;
  abandonWaiters: (() => void)[];
  /** Exchanges a `hold` fault keeps from answering until `releaseHeld()` (or `reset()`). */
  held: Held;
  faults: FaultBook;
  latencyMs: number;
}

function control(state: State, method: string, pathname: string, raw: string, res: ServerResponse): void {
  if (method === 'POST' && pathname === '/_fake/reset') {
    state.requests.length = 0;
    state.faults.clear();
    letGo(state.held, false);
    return sendJson(res, 200, { ok: true });
  }
  if (method === 'POST' && pathname === '/_fake/faults') {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendJson(res, 400, { error: 'body is not JSON' });
    }
    const rules = parseRules(body);
    if (typeof rules === 'string') return sendJson(res, 400, { error: rules });
    state.faults.set(rules);
    return sendJson(res, 200, { ok: true, rules: rules.length });
  }
  if (method === 'GET' && pathname === '/_fake/requests') return sendJson(res, 200, state.requests);
  sendJson(res, 404, { error: `unknown control route ${method} ${pathname}` });
}

async function handle(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const closed = new AbortController();
  res.on('close', () => {
    closed.abort();
    if (res.writableFinished) return;
    state.abandoned++;
    for (const wake of state.abandonWaiters.splice(0)) wake();
  });
  const method = req.method ?? 'GET';
  const path = req.url ?? '/';
  const url = new URL(path, 'http://fake-provider');
  const bytes = await readRaw(req);
  const raw = bytes.toString('utf8');
  if (url.pathname.startsWith('/_fake/')) return control(state, method, url.pathname, raw, res);

  let parsed: unknown;
  let jsonOk = true;
  const contentType = req.headers['content-type'];
  if (isMultipart(contentType)) {
    parsed = await parseMultipart(bytes, contentType!);
    jsonOk = parsed !== undefined;
  } else if (raw.trim() !== '') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      jsonOk = false;
    }
  }
  state.requests.push({ method, path, headers: { ...req.headers }, body: parsed });

  const route = findRoute(method, url.pathname);
  if (!route) {
    const reply = openaiError(404, `Invalid URL (${method} ${url.pathname})`, 'invalid_request_error');
    return sendError(res, reply);
  }
  const base = { url, headers: req.headers };
  if (!route.authorized(base)) return sendError(res, route.errors.unauthorized());
  if (!route.bodyless && (!jsonOk || !isRecord(parsed))) return sendError(res, route.errors.invalidJson());
  const ctx = { ...base, body: isRecord(parsed) ? parsed : {} };
  const invalid = route.validate?.(ctx);
  if (invalid) return sendError(res, invalid, requestIdHeaders());

  const { model, stream } = route.describe(ctx);
  const fault = state.faults.take({ path, model, stream });
  if (fault?.type === 'reset') {
    req.socket.resetAndDestroy();
    return;
  }
  if (fault?.type === 'hang') return untilClosed(closed.signal);
  if (fault?.type === 'hold' && !(await untilReleased(state.held, closed.signal))) return;
  if (!(await sleep(state.latencyMs + (fault?.type === 'delay' ? fault.ms : 0), closed.signal))) return;
  if (fault?.type === 'status')
    return sendError(res, route.errors.status({ ...fault, model }), requestIdHeaders());

  const outcome = route.answer(ctx, { usage: fault?.type !== 'no-usage' });
  const headers = { ...requestIdHeaders(), ...outcome.headers };
  if (outcome.kind === 'json') return sendJson(res, 200, outcome.body, headers);
  if (outcome.kind === 'raw') return sendRaw(res, outcome.contentType, outcome.body, headers);
  const streamError = (): string =>
    fault?.type === 'stream-error'
      ? route.errors.streamError({ status: fault.status ?? 500, code: fault.code, message: fault.message })
      : '';
  await writeStream(res, { ...outcome, headers }, fault, closed.signal, streamError);
}

export function startFakeProvider(opts: FakeProviderOptions = {}): Promise<FakeProvider> {
  const state: State = {
    requests: [],
    abandoned: 0,
    abandonWaiters: [],
    held: new Set(),
    faults: new FaultBook(),
    latencyMs: opts.latencyMs ?? 0,
  };
  const server = createServer((req, res) => {
    handle(state, req, res).catch((err: unknown) => {
      // A handler bug must be visible in tests, not a silent hang.
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake provider bug: ${String(err)}` } });
      else res.destroy();
    });
  });
  const closeRealtime = attachRealtime(server, state);
  const host = opts.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const urlHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${port}`,
        port,
        requests: state.requests,
        setFaults: (rules: FaultRule[]) => state.faults.set(rules),
        get abandoned() {
          return state.abandoned;
        },
        whenAbandoned: () => new Promise<void>((wake) => state.abandonWaiters.push(wake)),
        releaseHeld: () => letGo(state.held, true),
        reset: () => {
          state.requests.length = 0;
          state.faults.clear();
          // A test that failed before releasing must not leave its exchange to the next one.
          letGo(state.held, false);
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Hung and stalled exchanges would keep close() waiting forever.
            server.closeAllConnections();
            closeRealtime();
          }),
      });
    });
  });
}
