/**
 * A client-chosen model name is kept wherever a request is accounted (usage records, the
 * request log, rollups, log lines), even when it names no model. Past 256 characters it is
 * refused at the edge with a 400 naming the field, on every route family that takes one,
 * and never reaches a usage record; 256 characters still get the usual answer.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_MODEL_NAME_CHARS } from '../../dataplane/src/server/model-name.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageToday } from '../harness/usage-record.ts';

const KEY = 'sk-test-model-name';
const AT_LIMIT = 'm'.repeat(MAX_MODEL_NAME_CHARS);
const OVER = 'x'.repeat(MAX_MODEL_NAME_CHARS + 1);
/** What a reviewer's repro sent: 100 KB per request. */
const HUGE = 'h'.repeat(100_000);

let stack: Stack;
let openai: OpenAI;
beforeAll(async () => {
  stack = await startStack(([f]) =>
    [
      deployment({
        name: 'gpt',
        model: 'gpt-4o-mini',
        baseUrl: fakeBase(f!),
        capabilities: ['chat', 'streaming', 'completions', 'embeddings'],
        pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2 },
      }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
  openai = new OpenAI({ apiKey: KEY, baseURL: stack.baseURL, maxRetries: 0 });
});
afterAll(() => stack.close());

interface Answer {
  status: number;
  body: { error?: { message: string; type: string; code: number; param?: string } };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

async function postForm(path: string, fields: Record<string, string>): Promise<Answer> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([Buffer.from('RIFF....WAVEfmt ')], { type: 'audio/wav' }), 'a.wav');
  const res = await fetch(`${stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** The SDK's thrown error as an Answer (the request must fail: every name here is unknown). */
async function viaSdk(call: () => Promise<unknown>): Promise<Answer> {
  const err = await call().then(
    () => {
      throw new Error('the request succeeded');
    },
    (e: unknown) => e,
  );
  if (!(err instanceof OpenAI.APIError) && !(err instanceof Anthropic.APIError)) throw err;
  return {
    status: err.status ?? 0,
    body: {
      error:
        (err.error as { error?: Answer['body']['error'] }).error ?? (err.error as Answer['body']['error']),
    },
  };
}

function expectRefused(a: Answer, param = 'model'): void {
  expect(a.status).toBe(400);
  expect(a.body.error).toMatchObject({ type: 'invalid_request_error', code: 400, param });
  expect(a.body.error!.message).toMatch(new RegExp(`^${param}: must be at most 256 characters`));
  // Only a short prefix of the name is echoed, never the name.
  expect(a.body.error!.message.length).toBeLessThan(200);
}

/** Each route family: how it sends a model name, and the param a refusal names. */
const families: { name: string; param?: string; send: (model: string) => Promise<Answer> }[] = [
  {
    name: 'chat completions (openai SDK)',
    send: (model) =>
      viaSdk(() => openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })),
  },
  {
    name: 'chat completions streaming (openai SDK)',
    send: (model) =>
      viaSdk(() =>
        openai.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      ),
  },
  {
    name: 'completions (openai SDK)',
    send: (model) => viaSdk(() => openai.completions.create({ model, prompt: 'hi' })),
  },
  {
    name: 'embeddings (openai SDK)',
    send: (model) => viaSdk(() => openai.embeddings.create({ model, input: 'hi' })),
  },
  {
    name: 'responses (openai SDK)',
    send: (model) => viaSdk(() => openai.responses.create({ model, input: 'hi' })),
  },
  {
    name: 'moderations (openai SDK)',
    send: (model) => viaSdk(() => openai.moderations.create({ model, input: 'hi' })),
  },
  {
    name: 'images/generations (openai SDK)',
    send: (model) => viaSdk(() => openai.images.generate({ model, prompt: 'a cat' })),
  },
  {
    name: 'messages (Anthropic SDK)',
    send: (model) =>
      viaSdk(() =>
        new Anthropic({ apiKey: KEY, baseURL: stack.gateway.url, maxRetries: 0 }).messages.create({
          model,
          max_tokens: 16,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      ),
  },
  {
    name: 'messages/count_tokens',
    send: (model) =>
      post('/v1/messages/count_tokens', { model, messages: [{ role: 'user', content: 'hi' }] }),
  },
  {
    name: 'Gemini ?model= on /v1/generateContent',
    send: (model) =>
      post(`/v1/generateContent?model=${model}`, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
  },
  {
    name: 'audio/transcriptions (multipart field)',
    send: (model) => postForm('/v1/audio/transcriptions', { model }),
  },
  {
    name: 'realtime client secret (session.model)',
    param: 'session.model',
    send: (model) => post('/v1/realtime/client_secrets', { session: { type: 'realtime', model } }),
  },
  {
    name: 'x-gantry-model header (files)',
    param: 'x-gantry-model',
    send: (model) =>
      post(
        '/v1/batches',
        { input_file_id: 'file-x', endpoint: '/v1/chat/completions', completion_window: '24h' },
        { 'x-gantry-model': model },
      ),
  },
];

const geminiBody = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
families.push(
  {
    name: 'Gemini path /v1/models/{model}:generateContent',
    send: (model) => post(`/v1/models/${model}:generateContent`, geminiBody),
  },
  {
    name: 'Gemini path /v1/models/{model}:streamGenerateContent',
    send: (model) => post(`/v1/models/${model}:streamGenerateContent?alt=sse`, geminiBody),
  },
  {
    name: 'model retrieve GET /v1/models/{model}',
    send: async (model) => {
      const res = await fetch(`${stack.gateway.url}/v1/models/${model}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      return { status: res.status, body: (await res.json()) as Answer['body'] };
    },
  },
);

/** The a2a agent in the path: a router parameter; past the router's 256 the route's fallback answers. */
const a2a = (agent: string): Promise<Answer> =>
  post(`/v1/a2a/${agent}/message/send`, {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } },
  });

/** The Realtime upgrade's HTTP refusal. */
function realtimeUpgrade(model: string): Promise<Answer> {
  const ws = new WebSocket(`${stack.gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=${model}`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('upgrade was accepted')));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) as Answer['body'] }));
    });
    ws.once('error', reject);
  });
}
families.push({ name: 'realtime WebSocket ?model=', send: realtimeUpgrade });

describe('model names are bounded at the edge', () => {
  for (const f of families) {
    it(`${f.name}: 257 characters is a 400 naming ${f.param ?? 'model'}; 256 is answered as before`, async () => {
      expectRefused(await f.send(OVER), f.param);
      const atLimit = await f.send(AT_LIMIT);
      // The usual answer for a name no deployment has: not the length refusal.
      expect(atLimit.status).not.toBe(400);
      expect(atLimit.status).toBeGreaterThanOrEqual(400);
    });
  }

  it('a2a agent in the path: 256 characters is answered as before; longer is a 400 naming agent', async () => {
    expect((await a2a(AT_LIMIT)).status).toBe(404);
    expectRefused(await a2a(OVER), 'agent');
    // Any length, and percent-encoded as the router decodes it: the same short 400.
    const huge = await a2a('a'.repeat(10_000));
    expectRefused(huge, 'agent');
    expect(huge.body.error!.message).toContain('got 10000 starting "aaaa');
    expectRefused(await a2a('%61'.repeat(MAX_MODEL_NAME_CHARS + 1)), 'agent');
  });

  it('other paths under /v1/a2a/ are still the 404 they were, whatever their length', async () => {
    for (const path of [`/v1/a2a/${OVER}/tasks/get`, '/v1/a2a/x/y/message/send', '/v1/a2a/x']) {
      const a = await post(path, {});
      expect(a.status).toBe(404);
      expect(a.body.error).toMatchObject({ type: 'not_found', code: 404 });
    }
  });

  it('a 10,000-character model in the Gemini path is the same short 400, not a 414', async () => {
    const a = await post(`/v1/models/${'g'.repeat(10_000)}:generateContent`, geminiBody);
    expectRefused(a);
    expect(a.body.error!.message).toContain('got 10000 starting "gggg');
  });

  it('a 5,000-character Gemini path naming no method is a 404 echoing only its start', async () => {
    const a = await post(`/v1/models/${'g'.repeat(5_000)}`, geminiBody);
    expect(a.status).toBe(404);
    expect(a.body.error).toMatchObject({ type: 'not_found', code: 404 });
    expect(a.body.error!.message).toBe(
      `no route POST /v1/models/${'g'.repeat(32)}… (5000 characters): the path must end in :generateContent or :streamGenerateContent`,
    );
    // A short one is still named whole.
    const short = await post('/v1/models/m:embed', geminiBody);
    expect(short.status).toBe(404);
    expect(short.body.error!.message).toContain('no route POST /v1/models/m:embed: the path must end in');
  });

  it('a 100 KB name is refused with a short message', async () => {
    const a = await post('/v1/chat/completions', {
      model: HUGE,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expectRefused(a);
    expect(a.body.error!.message).toContain(`got ${HUGE.length} starting "hhhh`);
  });

  it('no usage record holds an oversized name; the 256-character ones are recorded as before', async () => {
    const records = await usageToday(stack, 'acme');
    const longest = Math.max(...records.flatMap((r) => [r.requestedModel.length, r.model.length]));
    expect(longest).toBe(MAX_MODEL_NAME_CHARS);
    expect(records.some((r) => r.requestedModel === AT_LIMIT)).toBe(true);
    expect(records.some((r) => r.requestedModel.includes('xxxx') || r.requestedModel.includes('hhhh'))).toBe(
      false,
    );
  });
});
