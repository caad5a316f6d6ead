/**
 * Google's Gemini SDKs send the API key in `x-goog-api-key`: over real HTTP, Gantry takes its
 * own key from there, on the Gemini-native routes (and any other), below `Authorization` and
 * `x-api-key` in precedence; a key in the URL (`?key=`) is refused with a 401 saying so.
 */
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import type { GeminiGenerateResponse } from '../../dataplane/src/providers/gemini/wire.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-goog-acme';
const OTHER_KEY = 'sk-goog-globex';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'flash', model: 'flash', baseUrl: fakeBase(url!) }),
      deployment({ name: 'pro', model: 'pro', baseUrl: fakeBase(url!) }),
      tenant('acme', ['flash']),
      tenant('globex', ['pro']),
      apiKey('acme-key', KEY, 'acme'),
      apiKey('globex-key', OTHER_KEY, 'globex'),
    ].join(''),
  );
});
afterAll(() => stack.close());
beforeEach(() => stack.fakes[0]!.reset());

const body = { contents: [{ role: 'user', parts: [{ text: 'hello gemini' }] }] };

const post = (path: string, headers: Record<string, string>) =>
  fetch(`${stack.baseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function expect401(res: Response): Promise<string> {
  expect(res.status).toBe(401);
  const json = (await res.json()) as { error: { message: string; type: string; code: number } };
  expect(json.error).toMatchObject({ type: 'authentication_error', code: 401 });
  return json.error.message;
}

describe('x-goog-api-key', () => {
  it("authenticates generateContent on Gemini's model path, charged to the key's tenant", async () => {
    const res = await post('/models/flash:generateContent', { 'x-goog-api-key': KEY });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as GeminiGenerateResponse;
    expect(answer.candidates?.[0]?.content?.parts).toEqual([{ text: fakeAnswer('hello gemini') }]);
    const record = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'generate_content', keyId: 'default/acme-key' });
    expect(stack.fakes[0]!.requests).toHaveLength(1);
  });

  it('authenticates streamGenerateContent with ?alt=sse, as the SDK streams', async () => {
    const res = await post('/models/flash:streamGenerateContent?alt=sse', { 'x-goog-api-key': KEY });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .flatMap(
        (l) => (JSON.parse(l.slice(6)) as GeminiGenerateResponse).candidates?.[0]?.content?.parts ?? [],
      )
      .map((p) => p.text ?? '')
      .join('');
    expect(text).toBe(fakeAnswer('hello gemini'));
  });

  it("is the key's own access: another tenant's key gets its models only", async () => {
    const res = await post('/models/flash:generateContent', { 'x-goog-api-key': OTHER_KEY });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('flash');
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('a wrong key there is a 401, with no upstream call', async () => {
    await expect401(await post('/models/flash:generateContent', { 'x-goog-api-key': 'sk-nope' }));
    await expect401(await post('/models/flash:generateContent', { 'x-goog-api-key': '' }));
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('Authorization and x-api-key come first: a wrong key in them is not rescued by x-goog-api-key', async () => {
    await expect401(
      await post('/models/flash:generateContent', { authorization: 'Bearer sk-nope', 'x-goog-api-key': KEY }),
    );
    await expect401(
      await post('/models/flash:generateContent', { 'x-api-key': 'sk-nope', 'x-goog-api-key': KEY }),
    );
    expect(stack.fakes[0]!.requests).toHaveLength(0);
    const ok = await post('/models/flash:generateContent', {
      authorization: `Bearer ${KEY}`,
      'x-goog-api-key': 'sk-nope',
    });
    expect(ok.status).toBe(200);
  });

  it('is accepted on the OpenAI-shaped routes too, like x-api-key', async () => {
    const res = await fetch(`${stack.baseURL}/models`, { headers: { 'x-goog-api-key': KEY } });
    expect(res.status).toBe(200);
    const ids = ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids).toEqual(['flash']);
  });
});

describe("Google's own SDK (@google/genai) pointed at Gantry", () => {
  // The SDK puts the key in x-goog-api-key and the version in the path; Gantry serves `v1`.
  const client = (apiKey: string) =>
    new GoogleGenAI({
      apiKey,
      httpOptions: { baseUrl: stack.baseURL.replace(/\/v1$/, ''), apiVersion: 'v1' },
    });

  it('generates and streams with the Gantry key', async () => {
    const answer = await client(KEY).models.generateContent({ model: 'flash', contents: 'hello gemini' });
    expect(answer.text).toBe(fakeAnswer('hello gemini'));
    let streamed = '';
    for await (const chunk of await client(KEY).models.generateContentStream({
      model: 'flash',
      contents: 'hello gemini',
    }))
      streamed += chunk.text ?? '';
    expect(streamed).toBe(fakeAnswer('hello gemini'));
    expect(stack.fakes[0]!.requests).toHaveLength(2);
  });

  it('gets a 401 for a wrong key, and nothing goes upstream', async () => {
    await expect(
      client('sk-nope').models.generateContent({ model: 'flash', contents: 'hi' }),
    ).rejects.toMatchObject({
      status: 401,
    });
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });
});

describe('?key= in the URL', () => {
  it('is refused with a 401 that says so, even with a valid key, and nothing goes upstream', async () => {
    const message = await expect401(await post(`/models/flash:generateContent?key=${KEY}`, {}));
    expect(message).toContain('?key=');
    expect(message).toContain('x-goog-api-key');
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('does not override a key sent in a header', async () => {
    const res = await post('/models/flash:generateContent?key=sk-nope', { 'x-goog-api-key': KEY });
    expect(res.status).toBe(200);
  });

  it('a keyless request without it keeps the plain message', async () => {
    const message = await expect401(await post('/models/flash:generateContent', {}));
    expect(message).toBe('missing API key: send Authorization: Bearer <key>');
  });
});
