/**
 * Refusals of model names the configuration does not know. Each made-up name used to become a
 * model of its own in analytics (a rollup cell and a models-index entry kept ~401 days: 4,000
 * names took the dashboard from 4 ms to 280 ms), and the 404 came before admission, so a
 * rate-limited key could send them without limit. Now they are recorded under `(unknown)` and
 * count against the key's request rate, on every entry point that takes a model name, with the
 * in-process stores and with Redis.
 */
import Anthropic from '@anthropic-ai/sdk';
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const USER = 'sk-test-unknown-user';
const ADMIN = 'sk-test-unknown-admin';
const LIMITED = 'sk-test-unknown-limited';
const LIMIT = 5;
/** A key for the entry points that look the name up in their own way (A2A, fine-tuning, input_tokens). */
const LIMITED_LOOKUPS = 'sk-test-unknown-limited-lookups';
const LOOKUPS_LIMIT = 3;

const backends = [
  { name: 'in process', redis: false },
  { name: 'redis', redis: true },
] as const;

describe.each(backends)('unknown model names ($name)', ({ redis }) => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'gpt-test',
            model: 'gpt-test',
            baseUrl: fakeBase(url!),
            capabilities: ['chat', 'completions', 'embeddings', 'images', 'audio'],
          }),
          tenant('acme'),
          apiKey('user', USER, 'acme'),
          apiKey('admin', ADMIN, 'acme', { role: 'admin' }),
          apiKey('limited', LIMITED, 'acme', { rateLimit: { requestsPerMinute: LIMIT } }),
          apiKey('lookups', LIMITED_LOOKUPS, 'acme', { rateLimit: { requestsPerMinute: LOOKUPS_LIMIT } }),
        ].join(''),
      redis ? { redisUrl: testRedisUrl(), redisPrefix: `unknown-${randomUUID()}` } : {},
    );
  }, 60_000);
  afterAll(() => stack?.close());

  const openai = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });
  const statusOf = (p: Promise<unknown>): Promise<number | undefined> =>
    p.then(
      () => 200,
      (e: { status?: number }) => e.status,
    );
  const post = (path: string, key: string, body: unknown) =>
    fetch(`${stack.baseURL}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.status);

  /** Every entry point that takes a model name, each with its own made-up name. */
  const refusals = (key: string, tag: string): Promise<number | undefined>[] => {
    const oa = openai(key);
    const name = (what: string) => `made-up-${tag}-${what}`;
    const anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: key, maxRetries: 0 });
    return [
      statusOf(
        oa.chat.completions.create({ model: name('chat'), messages: [{ role: 'user', content: 'hi' }] }),
      ),
      statusOf(oa.completions.create({ model: name('completions'), prompt: 'hi' })),
      statusOf(oa.responses.create({ model: name('responses'), input: 'hi' })),
      statusOf(oa.embeddings.create({ model: name('embeddings'), input: 'hi' })),
      statusOf(oa.images.generate({ model: name('images'), prompt: 'a cat' })),
      statusOf(oa.audio.speech.create({ model: name('speech'), input: 'hi', voice: 'alloy' })),
      statusOf(
        anthropic.messages.create({
          model: name('messages'),
          max_tokens: 5,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      ),
      post('/generateContent', key, { model: name('gemini'), contents: [{ parts: [{ text: 'hi' }] }] }),
      post(`/models/${name('gemini-path')}:generateContent`, key, {
        contents: [{ parts: [{ text: 'hi' }] }],
      }),
      ...lookups(key, tag),
    ];
  };

  /** The entry points that look the name up before admission by a route of their own. */
  const lookups = (key: string, tag: string): Promise<number>[] => [
    post(`/a2a/made-up-${tag}-agent/message/send`, key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } },
    }),
    post('/fine_tuning/jobs', key, { model: `made-up-${tag}-fine-tuning`, training_file: 'file-abc' }),
    post('/responses/input_tokens', key, { model: `made-up-${tag}-input-tokens`, input: 'hi' }),
  ];

  const filters = async (): Promise<{ models: string[] }> => {
    const res = await fetch(`${stack.gateway.url}/api/analytics/usage/filters`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { models: string[] };
  };

  it('records every made-up name under one label, on every entry point', async () => {
    const statuses = await Promise.all(refusals(USER, 'a'));
    expect(statuses).toEqual(statuses.map(() => 404));
    const more = await Promise.all(refusals(USER, 'b'));
    expect(more).toEqual(more.map(() => 404));
    // The records are written as the answers go out: wait until all 24 are counted.
    const logs = await until('the refusals in the request log', async () => {
      const res = await fetch(`${stack.gateway.url}/api/analytics/usage/logs?limit=100`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      const body = (await res.json()) as {
        data: { model: string; requested_model: string; status: number }[];
      };
      return body.data.length >= 24 ? body.data : undefined;
    });
    expect(new Set(logs.map((r) => r.model))).toEqual(new Set(['(unknown)']));
    // The log still says what the caller asked for (it is bounded by the log's length).
    expect(logs.map((r) => r.requested_model)).toEqual(
      expect.arrayContaining([
        'made-up-a-chat',
        'made-up-a-agent',
        'made-up-a-fine-tuning',
        'made-up-a-input-tokens',
      ]),
    );
    // The filters list the configured models and the one label, nothing a caller made up.
    expect((await filters()).models.sort()).toEqual(['(unknown)', 'gpt-test']);
  });

  it("counts unknown-model refusals against the key's request rate", async () => {
    const answers: { status: number; remaining: string | null }[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await fetch(`${stack.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${LIMITED}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: `rl-junk-${i}`, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.arrayBuffer();
      answers.push({ status: res.status, remaining: res.headers.get('x-ratelimit-remaining-requests') });
    }
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 404, 429, 429]);
    expect(answers.slice(0, LIMIT).map((a) => a.remaining)).toEqual(['4', '3', '2', '1', '0']);
    // The minute's requests are spent: a real request right after is refused too.
    const real = openai(LIMITED).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(await statusOf(real)).toBe(429);
  });

  it('counts the refusals of A2A, fine-tuning and input_tokens too', async () => {
    // In turn, so each one's count is seen: any of the three left uncounted shifts the 429s.
    const statuses: number[] = [];
    for (const tag of ['rl-1', 'rl-2'])
      for (const refusal of lookups(LIMITED_LOOKUPS, tag)) statuses.push(await refusal);
    expect(statuses).toEqual([404, 404, 404, 429, 429, 429]);
  });
});
