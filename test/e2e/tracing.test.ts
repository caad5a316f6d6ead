/**
 * Request ids and W3C trace context across the gateway: a sane caller id is kept (else one
 * is made), returned, logged and sent upstream; a caller's traceparent is continued, with
 * Gantry's own span exported over OTLP/HTTP to a collector when one is configured, and
 * passed on untouched when none is.
 */
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-tracing-CANARYKEY';
const PROMPT = 'TRACECANARY tell me about distributed tracing';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  status: { code: number };
}

/** A minimal OTLP/HTTP collector: keeps every body posted to /v1/traces. */
class Collector {
  readonly bodies: string[] = [];
  private waiters: (() => void)[] = [];
  readonly server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (
        req.method === 'POST' &&
        req.url === '/v1/traces' &&
        req.headers['content-type'] === 'application/json'
      )
        this.bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of this.waiters.splice(0)) w();
    });
  });

  spans(): OtlpSpan[] {
    return this.bodies.flatMap((b) =>
      (JSON.parse(b) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans.flatMap(
        (r) => r.scopeSpans.flatMap((s) => s.spans),
      ),
    );
  }

  /** Resolves with the first span that matches, as soon as it has been posted. */
  async span(match: (s: OtlpSpan) => boolean): Promise<OtlpSpan> {
    for (;;) {
      const found = this.spans().find(match);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return (
    v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : (v?.doubleValue ?? v?.boolValue))
  );
};

let collector: Collector;
let traced: Stack;
let plain: Stack;
const logLines: Record<string, unknown>[] = [];

const manifests = ([url]: string[]) =>
  [
    deployment({ name: 'trace-dep', model: 'traced', baseUrl: fakeBase(url!) }),
    tenant('acme'),
    apiKey('k', KEY, 'acme'),
  ].join('');

beforeAll(async () => {
  collector = new Collector();
  await new Promise<void>((resolve) => collector.server.listen(0, '127.0.0.1', resolve));
  const address = collector.server.address() as { port: number };
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean))
        logLines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  traced = await startStack(manifests, {
    env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_OTLP_ENDPOINT: `http://127.0.0.1:${address.port}` },
    otlp: { flushMs: 10 },
    logger: { level: 'info', stream },
  });
  plain = await startStack(manifests);
});
afterAll(async () => {
  await Promise.all([traced?.close(), plain?.close()]);
  await new Promise((resolve) => collector.server.close(resolve));
});
beforeEach(() => {
  for (const f of [...traced.fakes, ...plain.fakes]) f.reset();
  for (const s of [traced, plain]) s.gateway.health.reset();
});

async function chat(stack: Stack, headers: Record<string, string>, stream = false) {
  const client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0, defaultHeaders: headers });
  if (!stream) {
    const { response } = await client.chat.completions
      .create({ model: 'traced', messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    return response.headers;
  }
  const { data, response } = await client.chat.completions
    .create({ model: 'traced', stream: true, messages: [{ role: 'user', content: PROMPT }] })
    .withResponse();
  for await (const _chunk of data) {
    // drain
  }
  return response.headers;
}

const upstreamHeaders = (stack: Stack) => stack.fakes[0]!.requests.at(-1)!.headers;

describe('x-request-id', () => {
  it('a sane caller id is returned, sent upstream and logged', async () => {
    const headers = await chat(traced, { 'x-request-id': 'caller-req-42.a:b' });
    expect(headers.get('x-request-id')).toBe('caller-req-42.a:b');
    expect(headers.get('x-gantry-request-id')).toBe('caller-req-42.a:b');
    expect(upstreamHeaders(traced)['x-request-id']).toBe('caller-req-42.a:b');
    const line = logLines.find((l) => l.msg === 'request completed' && l.reqId === 'caller-req-42.a:b');
    expect(line).toBeDefined();
  });

  it('a caller id that repeats does not merge requests: each is recorded and charged on its own', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const query = { tenant: 'acme', from: today, to: today, limit: 1000 };
    const before = (await traced.gateway.stores.usage.logs(query)).length;
    await chat(traced, { 'x-request-id': 'same-id-twice' });
    await chat(traced, { 'x-request-id': 'same-id-twice' });
    const records = await traced.gateway.stores.usage.logs(query);
    expect(records.length - before).toBe(2);
    const [a, b] = records.slice(0, 2);
    expect(a!.id).not.toBe(b!.id);
    // The log line names the record, so an operator can go from the caller's id to it.
    const logged = logLines.filter((l) => l.msg === 'request completed' && l.reqId === 'same-id-twice');
    expect(logged.map((l) => l.recordId).sort()).toEqual([a!.id, b!.id].sort());
  });

  it.each([
    ['too long', 'x'.repeat(129)],
    ['with a space', 'two words'],
    ['with a quote', 'a"b'],
  ])('an id %s is replaced by a generated one, used everywhere', async (_why, id) => {
    const headers = await chat(traced, { 'x-request-id': id });
    const given = headers.get('x-request-id');
    expect(given).toMatch(UUID);
    expect(upstreamHeaders(traced)['x-request-id']).toBe(given);
  });

  it('without one, an id is generated; streams carry it too', async () => {
    const headers = await chat(traced, {}, true);
    const given = headers.get('x-request-id');
    expect(given).toMatch(UUID);
    expect(headers.get('x-gantry-request-id')).toBe(given);
    expect(upstreamHeaders(traced)['x-request-id']).toBe(given);
  });

  it('a refused key and an administrative path get both id headers too, once each', async () => {
    const refused = await fetch(`${traced.baseURL}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk-nobody',
        'content-type': 'application/json',
        'x-request-id': 'who-1',
      },
      body: JSON.stringify({ model: 'traced', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-request-id')).toBe('who-1');
    expect(refused.headers.get('x-gantry-request-id')).toBe('who-1');
    const admin = await fetch(`${traced.baseURL.replace(/\/v1$/, '')}/ui/`, {
      headers: { 'x-request-id': 'adm-1' },
    });
    expect(admin.status).toBe(403);
    expect(admin.headers.get('x-request-id')).toBe('adm-1');
    expect(admin.headers.get('x-gantry-request-id')).toBe('adm-1');
  });

  it('a bad request still gets one back', async () => {
    const res = await fetch(`${traced.baseURL}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        'x-request-id': 'bad-1',
      },
      body: JSON.stringify({ model: 'traced', temperature: 9, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-id')).toBe('bad-1');
  });
});

describe('trace context and OTLP export', () => {
  it('continues the caller’s trace: Gantry’s span is exported and is the upstream call’s parent', async () => {
    const headers = await chat(traced, {
      traceparent: `00-${TRACE}-${PARENT}-01`,
      tracestate: 'vendor=opaque',
      'x-request-id': 'traced-1',
    });
    expect(headers.get('x-request-id')).toBe('traced-1');
    const sent = upstreamHeaders(traced);
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(sent.traceparent));
    expect(m?.[1]).toBe(TRACE);
    const gatewaySpan = m![2]!;
    expect(gatewaySpan).not.toBe(PARENT);
    expect(sent.tracestate).toBe('vendor=opaque');

    const span = await collector.span((s) => s.spanId === gatewaySpan);
    expect(span.traceId).toBe(TRACE);
    expect(span.parentSpanId).toBe(PARENT);
    expect(span.name).toBe('POST /v1/chat/completions');
    expect(span.kind).toBe(2);
    expect(span.status.code).toBe(1);
    expect(BigInt(span.endTimeUnixNano)).toBeGreaterThan(BigInt(span.startTimeUnixNano));
    expect(attr(span, 'gen_ai.request.model')).toBe('traced');
    expect(attr(span, 'gen_ai.response.model')).toBe('traced');
    expect(attr(span, 'gantry.deployment')).toBe('trace-dep');
    expect(attr(span, 'http.response.status_code')).toBe(200);
    expect(attr(span, 'gantry.request_id')).toBe('traced-1');
    expect(attr(span, 'gantry.tenant')).toBe('acme');
    expect(attr(span, 'gantry.cost_usd')).toBeGreaterThan(0);
  });

  it('starts a trace when the caller sent none; a stream’s span carries time to first token', async () => {
    await chat(traced, { 'x-request-id': 'traced-2' }, true);
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(upstreamHeaders(traced).traceparent));
    expect(m).not.toBeNull();
    const span = await collector.span((s) => s.spanId === m![2]);
    expect(span.traceId).toBe(m![1]);
    expect(span.parentSpanId).toBeUndefined();
    expect(attr(span, 'gantry.ttft_ms')).toBeGreaterThanOrEqual(0);
  });

  it('a failed request’s span has an error status', async () => {
    traced.fakes[0]!.setFaults([{ fault: { type: 'status', status: 500 } }]);
    await chat(traced, { 'x-request-id': 'traced-fail' }).catch(() => undefined);
    const span = await collector.span((s) => attr(s, 'gantry.request_id') === 'traced-fail');
    expect(span.status.code).toBe(2);
    expect(attr(span, 'http.response.status_code')).toBeGreaterThanOrEqual(500);
  });

  it('an unsampled caller trace is passed on untouched and records no span', async () => {
    await chat(traced, { traceparent: `00-${TRACE}-${PARENT}-00`, 'x-request-id': 'unsampled' });
    expect(upstreamHeaders(traced).traceparent).toBe(`00-${TRACE}-${PARENT}-00`);
    // Spans leave in order: once a later one has arrived, the unsampled one would have too.
    await chat(traced, { 'x-request-id': 'after-unsampled' });
    await collector.span((s) => attr(s, 'gantry.request_id') === 'after-unsampled');
    expect(collector.spans().some((s) => attr(s, 'gantry.request_id') === 'unsampled')).toBe(false);
  });

  it('an invalid traceparent is ignored (a new trace is started)', async () => {
    await chat(traced, { traceparent: `00-${'0'.repeat(32)}-${PARENT}-01` });
    const sent = String(upstreamHeaders(traced).traceparent);
    expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(sent).not.toContain('0'.repeat(32));
  });

  it('exported spans carry neither the key nor the prompt', () => {
    expect(collector.bodies.length).toBeGreaterThan(0);
    for (const body of collector.bodies) {
      expect(body).not.toContain('CANARYKEY');
      expect(body).not.toContain('TRACECANARY');
    }
    const resource = (
      JSON.parse(collector.bodies[0]!) as { resourceSpans: { resource: { attributes: OtlpAttribute[] } }[] }
    ).resourceSpans[0]!.resource.attributes;
    expect(resource).toContainEqual({ key: 'service.name', value: { stringValue: 'gantry' } });
  });

  it('without an OTLP endpoint the caller’s traceparent reaches the upstream unchanged', async () => {
    await chat(plain, { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'vendor=opaque' });
    expect(upstreamHeaders(plain).traceparent).toBe(`00-${TRACE}-${PARENT}-01`);
    expect(upstreamHeaders(plain).tracestate).toBe('vendor=opaque');
  });

  it('without an OTLP endpoint and no caller trace, no traceparent is invented', async () => {
    await chat(plain, {});
    expect(upstreamHeaders(plain).traceparent).toBeUndefined();
    expect(upstreamHeaders(plain)['x-request-id']).toMatch(UUID);
  });
});
