/**
 * An upstream refusal the caller's own request caused never counts against a deployment every
 * tenant shares. A 429 saying this one request needs more tokens than the deployment's whole
 * per-minute limit (OpenAI's "Request too large … Limit L, Requested R") is failed over (a higher
 * tier may fit it), Anthropic's 413 over its byte limit only to another endpoint, and, when no
 * deployment takes it, it is a 413 naming the limit: never retried, no cool-down, no fault. A
 * 403/404 naming something the request refers to (a Gemini file the key may not read, an
 * Anthropic container id) is a 404 naming the field, and the circuit stays closed. Real load
 * 429s still cool the deployment down, and a 403 blaming the deployment's key still opens it.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { failure } from '../harness/resources.ts';

const KEY = 'sk-test-client-faults';
/** The breaker opens at three faults: each scenario repeats its request three times. */
const TRIES = 3;
const GEMINI_FILE = 'https://generativelanguage.googleapis.com/v1beta/files/abc-123xyz';

let stack: Stack;
let openai: OpenAI;
let anthropic: Anthropic;
const fake = () => stack.fakes[0]!;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'gpt', model: 'gpt', baseUrl: fakeBase(url!) }),
        // A mixed-tier pool: a free tier whose per-minute limit fits almost nothing, then a paid one.
        deployment({
          name: 'tier-free',
          model: 'tiered',
          upstreamModel: 'tiered-free',
          baseUrl: fakeBase(url!),
          priority: 1,
        }),
        deployment({
          name: 'tier-paid',
          model: 'tiered',
          upstreamModel: 'tiered-paid',
          baseUrl: fakeBase(url!),
          priority: 2,
        }),
        deployment({
          name: 'claude',
          model: 'claude',
          provider: 'anthropic',
          baseUrl: fakeBase(url!, 'anthropic'),
          contextWindow: 200_000,
          fallbacks: ['claude-big'],
        }),
        deployment({
          name: 'claude-big',
          model: 'claude-big',
          provider: 'anthropic',
          baseUrl: fakeBase(url!, 'anthropic'),
          contextWindow: 1_000_000,
        }),
        deployment({
          name: 'gem',
          model: 'gem',
          provider: 'gemini',
          baseUrl: fakeBase(url!, 'gemini'),
          capabilities: ['chat', 'vision'],
        }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { breaker: { failureThreshold: TRIES, baseOpenMs: 60_000, maxOpenMs: 60_000 } },
  );
  openai = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  fake().reset();
  stack.gateway.health.reset();
});

const ask = (model = 'gpt') =>
  openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

/** Upstream calls so far that named `model` in their body (Anthropic's and OpenAI's wire). */
const callsTo = (model: string): number =>
  fake().requests.filter((r) => (r.body as { model?: unknown } | undefined)?.model === model).length;

describe('a request too large for the deployment', () => {
  it('three OpenAI "Request too large" 429s are 413s naming the limit, and the deployment keeps serving', async () => {
    fake().setFaults([
      {
        fault: {
          type: 'status',
          status: 429,
          retryAfterSeconds: 30,
          tokens: { limit: 30000, requested: 50000 },
        },
      },
    ]);
    for (let i = 0; i < TRIES; i++) {
      const err = await failure(ask());
      expect(err.status).toBe(413);
      expect(err.error).toMatchObject({ type: 'request_too_large', code: 413 });
      const message = String(err.error.message);
      expect(message).toContain('30000');
      expect(message).toContain('50000');
      // The provider's words name the organisation behind the gateway's key.
      expect(message).not.toContain('org-fake');
    }
    // One upstream call per request: not retried on the same deployment.
    expect(fake().requests).toHaveLength(TRIES);
    fake().setFaults([]);
    expect(stack.gateway.health.circuitState('gpt')).toBe('closed');
    // Not cooled down: the next request reaches the deployment at once.
    expect((await ask()).choices[0]?.message.content).toBeTruthy();
    expect(fake().requests).toHaveLength(TRIES + 1);
  });

  it('three real load 429s still cool the deployment down (the check can fail)', async () => {
    fake().setFaults([
      {
        times: TRIES,
        fault: {
          type: 'status',
          status: 429,
          retryAfterSeconds: 30,
          tokens: { limit: 30000, requested: 2000, used: 29000 },
        },
      },
    ]);
    for (let i = 0; i < TRIES; i++) expect((await failure(ask())).status).toBe(429);
    const upstream = fake().requests.length;
    // Cooling down: refused without an upstream call, though the provider would answer now.
    const err = await failure(ask());
    expect(err.status).toBe(429);
    expect(String(err.error.message)).toContain('rate limited upstream');
    expect(fake().requests).toHaveLength(upstream);
  });

  it("a pool whose first deployment's limit fits almost nothing is served by the next, circuits closed", async () => {
    // Groq's free tier answers 413 with the same words: a small prompt plus tools is over it.
    fake().setFaults([
      {
        match: { model: 'tiered-free' },
        fault: { type: 'status', status: 413, tokens: { limit: 10000, requested: 15088 } },
      },
    ]);
    for (let i = 0; i < TRIES; i++) expect((await ask('tiered')).choices[0]?.message.content).toBeTruthy();
    expect(callsTo('tiered-free')).toBe(TRIES);
    expect(callsTo('tiered-paid')).toBe(TRIES);
    expect(stack.gateway.health.circuitState('tier-free')).toBe('closed');
    expect(stack.gateway.health.circuitState('tier-paid')).toBe('closed');
  });

  it('too large for every deployment of the pool: the caller gets the 413, each tried once', async () => {
    fake().setFaults([{ fault: { type: 'status', status: 429, tokens: { limit: 10, requested: 12 } } }]);
    const err = await failure(ask('tiered'));
    expect(err.status).toBe(413);
    expect(err.error).toMatchObject({ type: 'request_too_large', code: 413 });
    expect(callsTo('tiered-free')).toBe(1);
    expect(callsTo('tiered-paid')).toBe(1);
    expect(stack.gateway.health.circuitState('tier-free')).toBe('closed');
  });

  it("Anthropic's 413 request_too_large is not sent again to the same endpoint: one upload, the caller's 413, held against no one", async () => {
    // claude-big is a fallback at the same provider and host: its byte limit is the same, so
    // re-sending the body (up to 32 MB) could only be refused alike.
    fake().setFaults([{ match: { model: 'claude' }, fault: { type: 'status', status: 413 } }]);
    for (let i = 0; i < TRIES; i++) {
      const err = await failure(
        anthropic.messages.create({
          model: 'claude',
          max_tokens: 20,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      expect(err.status).toBe(413);
    }
    expect(callsTo('claude')).toBe(TRIES);
    expect(callsTo('claude-big')).toBe(0);
    expect(stack.gateway.health.circuitState('claude')).toBe('closed');
  });

  it('a 429 "Limit 0" (a key with no quota for the model) counts against the deployment and opens its circuit', async () => {
    fake().setFaults([{ fault: { type: 'status', status: 429, tokens: { limit: 0, requested: 12 } } }]);
    for (let i = 0; i < TRIES; i++) expect((await failure(ask())).status).toBe(502);
    expect(stack.gateway.health.circuitState('gpt')).toBe('open');
  });

  it("Anthropic's 413 with nothing left to try is the caller's 413", async () => {
    fake().setFaults([{ fault: { type: 'status', status: 413 } }]);
    const err = await failure(
      anthropic.messages.create({
        model: 'claude',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(err.status).toBe(413);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    expect(JSON.stringify(err.error)).toContain('maximum allowed number of bytes');
    expect(stack.gateway.health.circuitState('claude')).toBe('closed');
    expect(stack.gateway.health.circuitState('claude-big')).toBe('closed');
  });
});

describe('a 403/404 naming something the request refers to', () => {
  const withGeminiFile = () =>
    openai.chat.completions.create({
      model: 'gem',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: GEMINI_FILE } },
          ],
        },
      ],
    });

  it('a Gemini file the key may not read (403) is a 404 naming the field, and the circuit stays closed', async () => {
    fake().setFaults([{ fault: { type: 'status', status: 403, missing: 'abc-123xyz' } }]);
    for (let i = 0; i < TRIES; i++) {
      const err = await failure(withGeminiFile());
      expect(err.status).toBe(404);
      // The field as the request reached Gemini; the message names the file the caller sent.
      expect(err.error).toMatchObject({
        type: 'not_found',
        code: 404,
        param: 'contents[0].parts[1].fileData.fileUri',
      });
      expect(String(err.error.message)).toContain('abc-123xyz');
    }
    expect(fake().requests).toHaveLength(TRIES);
    expect(stack.gateway.health.circuitState('gem')).toBe('closed');
    fake().setFaults([]);
    expect((await ask('gem')).choices[0]?.message.content).toBeTruthy();
  });

  it("a file name of any shape (all letters, short) is the caller's too: three such 403s leave the circuit closed", async () => {
    for (const name of ['abcdefgh', 'zzz', 'ab1']) {
      fake().setFaults([{ fault: { type: 'status', status: 403, missing: name } }]);
      const err = await failure(
        openai.chat.completions.create({
          model: 'gem',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'x' },
                {
                  type: 'image_url',
                  image_url: { url: `https://generativelanguage.googleapis.com/v1beta/files/${name}` },
                },
              ],
            },
          ],
        }),
      );
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: 'not_found', param: 'contents[0].parts[1].fileData.fileUri' });
    }
    expect(stack.gateway.health.circuitState('gem')).toBe('closed');
  });

  it('a bogus Anthropic container id (404) is a 404 naming container, and the circuit stays closed', async () => {
    const container = 'container_011bogus42';
    // The rule reads only that the 404 names the id the request sent, not these words.
    fake().setFaults([
      { fault: { type: 'status', status: 404, message: `Container not found: ${container}` } },
    ]);
    for (let i = 0; i < TRIES; i++) {
      const err = await failure(
        anthropic.messages.create({
          model: 'claude',
          max_tokens: 20,
          messages: [{ role: 'user', content: 'run it' }],
          container,
        } as Anthropic.MessageCreateParamsNonStreaming),
      );
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: 'error', error: { type: 'not_found', param: 'container' } });
      expect(JSON.stringify(err.error)).toContain(container);
    }
    expect(callsTo('claude-big')).toBe(0);
    expect(stack.gateway.health.circuitState('claude')).toBe('closed');
  });

  it("a 403 blaming the deployment's key still opens the circuit (the check can fail)", async () => {
    fake().setFaults([
      { fault: { type: 'status', status: 403, message: 'The caller does not have permission' } },
    ]);
    for (let i = 0; i < TRIES; i++) expect((await failure(withGeminiFile())).status).toBe(502);
    expect(stack.gateway.health.circuitState('gem')).toBe('open');
  });

  it("Anthropic's 403 for the deployment's key opens the circuit, though the caller's `user` is a word of it", async () => {
    // The adapter sends OpenAI's `user` as Anthropic's metadata.user_id: a label, no reference.
    fake().setFaults([
      {
        fault: {
          type: 'status',
          status: 403,
          message: 'Your API key does not have permission to use the specified resource.',
        },
      },
    ]);
    for (const user of ['api', 'key', 'resource'])
      expect(
        (
          await failure(
            openai.chat.completions.create({
              model: 'claude',
              user,
              messages: [{ role: 'user', content: 'hi' }],
            }),
          )
        ).status,
      ).toBe(502);
    expect(stack.gateway.health.circuitState('claude')).toBe('open');
  });

  it("a 404 naming none of the request's references (a misrouted base URL) still opens the circuit", async () => {
    fake().setFaults([
      { fault: { type: 'status', status: 404, message: 'Invalid URL (POST /v1/v1/chat/completions)' } },
    ]);
    for (let i = 0; i < TRIES; i++) expect((await failure(ask())).status).toBe(502);
    expect(stack.gateway.health.circuitState('gpt')).toBe('open');
  });
});
