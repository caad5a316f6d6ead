/**
 * The edge under generated bad input (issue 9): ≥ 1,000 requests from a seeded PRNG against
 * a real gateway process on the built-in fake provider. Every answer is below 500; every
 * error has the SPEC.md body (`code` equal to the status), on /v1/messages Anthropic's
 * `type: "error"` too; no deployment's circuit moved and no provider fault was counted
 * (bad input is never the provider's fault); every log line of the run is JSON without a
 * duplicate key. Reproduce a failure with GANTRY_FUZZ_SEED=<seed>.
 */
import { connect } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../harness/gateway-process.ts';
import { apiKey, deployment, manifest, tenant } from '../harness/stack.ts';
import { parseStrictJson } from '../harness/strict-json.ts';
import { generateCases, MODELS, type FuzzCase } from './fuzz-cases.ts';

const SEED = Number(process.env.GANTRY_FUZZ_SEED ?? 20261125);
const COUNT = 1200;
const CONCURRENCY = 16;
const CASE_TIMEOUT_MS = 15_000;
const KEY = 'sk-fuzz';

function config(): string {
  // The fake provider serves every deployment (no credential is set), whatever baseUrl says.
  const unused = 'http://127.0.0.1:9/v1';
  return [
    deployment({ name: 'fuzz-chat', model: MODELS.chat, baseUrl: unused }),
    deployment({ name: 'fuzz-claude', model: MODELS.messages, provider: 'anthropic', baseUrl: unused }),
    deployment({
      name: 'fuzz-legacy',
      model: MODELS.completions,
      baseUrl: unused,
      capabilities: ['completions'],
    }),
    deployment({
      name: 'fuzz-embed',
      model: MODELS.embeddings,
      baseUrl: unused,
      capabilities: ['embeddings'],
    }),
    manifest('Tenant', 'fuzz', {
      tier: 'pro',
      models: ['*'],
      cache: { enabled: true },
      // Routing on, so its stage (and its debug log line) runs for every chat request.
      routing: {
        enabled: true,
        levels: {
          trivial: { model: MODELS.chat },
          standard: { model: MODELS.chat },
          complex: { model: MODELS.chat },
        },
      },
    }),
    tenant('other'),
    apiKey('fuzz-key', KEY, 'fuzz'),
  ].join('');
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const agent = new Agent({
  connections: CONCURRENCY,
  headersTimeout: CASE_TIMEOUT_MS,
  bodyTimeout: CASE_TIMEOUT_MS,
});

async function sendHttp(base: string, c: Extract<FuzzCase, { kind: 'http' }>): Promise<Answer> {
  const res = await request(`${base}${c.path}`, {
    method: c.method,
    headers: c.headers,
    body: c.body,
    dispatcher: agent,
  });
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
  return { status: res.statusCode, headers, body: await res.body.text() };
}

/** Reads the one answer to raw bytes (every raw case asks the server to close after it). */
function sendRaw(base: string, bytes: string): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${CASE_TIMEOUT_MS} ms`));
    }, CASE_TIMEOUT_MS);
    socket.on('data', (d: Buffer) => chunks.push(d));
    // A reset after the answer is fine; what was received counts.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split);
      const headers: Record<string, string> = {};
      for (const line of head.split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = text.slice(split + 4);
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
      resolve({ status: Number(m[1]), headers, body });
    });
    socket.write(bytes, 'latin1');
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/** Empty when the answer is acceptable; otherwise what is wrong with it. */
function problems(c: FuzzCase, a: Answer): string[] {
  const out: string[] = [];
  if (a.status >= 500) out.push(`status ${a.status}`);
  const head = c.kind === 'http' && c.method === 'HEAD';
  if (a.status < 400 || head) return out;
  let body: { type?: unknown; error?: { message?: unknown; type?: unknown; code?: unknown } };
  try {
    body = JSON.parse(a.body) as typeof body;
  } catch {
    return [...out, `body is not JSON: ${a.body.slice(0, 120)}`];
  }
  const e = body.error;
  if (typeof e?.message !== 'string' || e.message === '') out.push('error.message missing');
  if (typeof e?.type !== 'string' || e.type === '') out.push('error.type missing');
  if (e?.code !== a.status) out.push(`error.code ${String(e?.code)} ≠ status ${a.status}`);
  if (c.kind === 'http' && c.path === '/v1/messages' && body.type !== 'error')
    out.push('no type: "error" on /v1/messages');
  if (a.status === 405 && !a.headers.allow) out.push('405 without Allow');
  return out;
}

async function metricLines(gw: GatewayProcess, name: string): Promise<string[]> {
  const text = await (await fetch(`${gw.adminUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

let gw: GatewayProcess;
const statuses = new Map<number, number>();
const failures: string[] = [];
let circuitsBefore: string[] = [];
let elapsedMs = 0;

beforeAll(async () => {
  gw = await startGatewayProcess(config(), { GANTRY_LOG_LEVEL: 'debug' });
  circuitsBefore = await metricLines(gw, 'gantry_deployment_circuit_state');
  const cases = generateCases(SEED, COUNT, KEY);
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const c = cases[index]!;
      try {
        const answer = c.kind === 'raw' ? await sendRaw(gw.url, c.bytes) : await sendHttp(gw.url, c);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const wrong = problems(c, answer);
        if (wrong.length > 0)
          failures.push(`#${index} ${c.what}: ${wrong.join('; ')} — ${answer.body.slice(0, 160)}`);
      } catch (err) {
        failures.push(`#${index} ${c.what}: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  elapsedMs = Date.now() - started;
}, 120_000);
afterAll(async () => {
  await agent.close();
  await gw?.stop();
});

describe(`fuzz: ${COUNT} generated bad requests (seed ${SEED})`, () => {
  it('every answer is below 500 and every error has the SPEC.md shape', () => {
    const summary = [...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
    console.info(`fuzz seed ${SEED}: ${COUNT} cases in ${elapsedMs} ms; statuses ${summary.join(' ')}`);
    expect(failures.slice(0, 25), `${failures.length} bad answers`).toEqual([]);
    // The generator mostly makes bad requests: most answers are client errors.
    const clientErrors = [...statuses].filter(([s]) => s >= 400 && s < 500).reduce((n, [, k]) => n + k, 0);
    expect(clientErrors).toBeGreaterThan(COUNT * 0.6);
  });

  it('no deployment’s circuit moved and no deployment fault was counted', async () => {
    const circuits = await metricLines(gw, 'gantry_deployment_circuit_state');
    expect(circuits).toHaveLength(4);
    expect(circuits).toEqual(circuitsBefore);
    for (const line of circuits) expect(line).toMatch(/ 0$/);
    // A provider's 400 to a request it found wrong is the caller's fault and may happen;
    // anything else would be bad input counted against a deployment.
    const callerFaults = /kind="(bad_request|content_policy|context_length)"/;
    const faults = (await metricLines(gw, 'gantry_upstream_failures_total')).filter(
      (l) => !/ 0$/.test(l) && !callerFaults.test(l),
    );
    expect(faults).toEqual([]);
  });

  it('every log line of the run is JSON with no duplicate key', async () => {
    // Every HTTP request is logged once (raw protocol garbage may not reach a route); the log
    // is written asynchronously, so the last lines may follow the last answers.
    const httpCases = generateCases(SEED, COUNT, KEY).filter((c) => c.kind === 'http').length;
    const completed = (lines: string[]) =>
      lines.filter((l) => l.includes('"msg":"request completed"')).length;
    const lines = await gw.waitForLines((l) => completed(l) >= httpCases);
    expect(completed(lines)).toBeGreaterThanOrEqual(httpCases);
    const bad: string[] = [];
    for (const line of lines) {
      try {
        const { duplicates } = parseStrictJson(line);
        if (duplicates.length > 0) bad.push(`${duplicates.join(', ')} in ${line.slice(0, 200)}`);
      } catch (err) {
        bad.push(`not JSON (${(err as Error).message}): ${line.slice(0, 200)}`);
      }
    }
    expect(bad.slice(0, 10), `${bad.length} bad log lines`).toEqual([]);
    // The routing stage's debug line is among them (it once repeated pino's `level`).
    expect(lines.some((l) => l.includes('"msg":"difficulty routing"'))).toBe(true);
  });
});
