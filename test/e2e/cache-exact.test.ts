/**
 * The cache's exact tier end to end (issue 15): the same request again is served DIRECT at
 * score 1 without embedding, with the headers, usage and wallet credit of a semantic hit —
 * once on in-process stores, once on a real Milvus Lite plus a real redis-server. The tenant
 * embeds through an embeddings deployment on the fake provider, so every embedding is a
 * request the test can count.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';

const backends = [
  { name: 'in-process', opts: {} },
  {
    name: 'Milvus Lite + Redis',
    opts: {
      milvusAddress: process.env.GANTRY_TEST_MILVUS_ADDRESS,
      milvusConsistency: 'Strong' as const,
      redisUrl: process.env.GANTRY_TEST_REDIS_URL,
    },
  },
];

type Params = Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'model' | 'messages'>;

describe.each(backends)('cache exact tier on $name', ({ opts }) => {
  let stack: Stack;
  const prefix = `exact-${randomUUID()}`;
  const fake = () => stack.fakes[0]!;
  const client = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });
  const calls = (kind: 'chat' | 'embeddings') =>
    fake().requests.filter((r) => r.path.includes(kind === 'chat' ? '/chat/completions' : '/embeddings'))
      .length;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'big',
            model: 'big',
            baseUrl: fakeBase(url!),
            pricing: { inputPerMillionTokens: 30, outputPerMillionTokens: 60 },
          }),
          deployment({
            name: 'embed',
            model: 'embed',
            baseUrl: fakeBase(url!),
            capabilities: ['embeddings'],
          }),
          manifest('CachePolicy', 'counted', { embeddingModel: 'embed' }),
          tenant('acme', ['*'], {
            tier: 'pro',
            wallet: { balanceUsd: 10 },
            cache: { enabled: true, policyRef: { name: 'counted' } },
          }),
          tenant('globex', ['*'], { cache: { enabled: true, policyRef: { name: 'counted' } } }),
          apiKey('acme', 'sk-acme', 'acme', { role: 'admin' }),
          apiKey('acme-b', 'sk-acme-b', 'acme'),
          apiKey('globex', 'sk-globex', 'globex'),
        ].join(''),
      {
        ...opts,
        redisPrefix: prefix,
        env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_ADMIN_KEY: 'sk-platform-0123456789abcdef0123' },
      },
    );
  });
  afterAll(() => stack.close());
  beforeEach(() => fake().reset());

  const messages = (q: string, system?: string): OpenAI.ChatCompletionMessageParam[] => [
    ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
    { role: 'user', content: 'Hello, I have a question.' },
    { role: 'assistant', content: 'Sure, ask away.' },
    { role: 'user', content: q },
  ];
  /** Each test asks its own questions: entries of one test never answer another's. */
  const ask = (key: string, q: string, extra: Params = {}, headers = {}, system?: string) =>
    client(key)
      .chat.completions.create({ model: 'big', messages: messages(q, system), ...extra }, { headers })
      .withResponse();
  const status = (r: { response: Response }) => r.response.headers.get('x-gantrycache-status');
  type Metric = { request_id: string; band: string; score: number | null; exact: boolean };
  const metricOf = async (requestId: string | null): Promise<Metric | undefined> => {
    const res = await fetch(`${stack.gateway.url}/api/v1/cache/metrics?limit=50`, {
      headers: { authorization: 'Bearer sk-acme' },
    });
    return ((await res.json()) as { data: Metric[] }).data.find((m) => m.request_id === requestId);
  };

  it('serves the same request again DIRECT at score 1 without embedding, crediting the wallet like any hit', async () => {
    const q = 'What is the boiling point of water at sea level?';
    const first = await ask('sk-acme', q);
    expect(status(first)).toBe('MISS');
    expect(calls('embeddings')).toBe(1);

    const again = await ask('sk-acme', q);
    expect(status(again)).toBe('DIRECT');
    expect(again.response.headers.get('x-gantrycache-score')).toBe('1.0000');
    expect(again.response.headers.get('x-gantry-provider')).toBe('cache');
    expect(Number(again.response.headers.get('x-gantrycache-tokens-saved'))).toBeGreaterThan(0);
    expect(again.data.choices[0]?.message.content).toBe(first.data.choices[0]?.message.content);
    expect(calls('embeddings')).toBe(1);
    expect(calls('chat')).toBe(1);

    // Usage and money as for a semantic hit: the full call is charged, the pro share credited.
    const usage = again.data.usage!;
    expect(usage.completion_tokens).toBe(first.data.usage?.completion_tokens);
    const requestId = again.response.headers.get('x-gantry-request-id');
    const credit = (await stack.gateway.stores.wallets.ledger('acme')).find(
      (e) => e.kind === 'cache_credit' && e.reference === requestId,
    );
    const fullCallMicros = usage.prompt_tokens * 30 + usage.completion_tokens * 60;
    expect(credit?.amountUsd).toBeCloseTo(Math.floor(fullCallMicros / 10) / 1e6, 9);
    expect(await metricOf(requestId)).toMatchObject({ band: 'DIRECT', score: 1, exact: true });
    const today = new Date().toISOString().slice(0, 10);
    const records = await stack.gateway.stores.usage.logs({
      tenant: 'acme',
      from: today,
      to: today,
      limit: 50,
    });
    expect(records.find((r) => r.id === requestId)?.cache).toMatchObject({
      band: 'DIRECT',
      score: 1,
      exact: true,
      creditedUsd: credit?.amountUsd,
    });
  });

  it('serves an Anthropic Messages request again without embedding, never an OpenAI one', async () => {
    const q = 'Which gas do plants take in for photosynthesis?';
    const anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: 'sk-acme', maxRetries: 0 });
    const send = () =>
      anthropic.messages
        .create({ model: 'big', max_tokens: 200, messages: [{ role: 'user', content: q }] })
        .withResponse();
    expect((await send()).response.headers.get('x-gantrycache-status')).toBe('MISS');
    const again = await send();
    expect(again.response.headers.get('x-gantrycache-status')).toBe('DIRECT');
    expect(again.response.headers.get('x-gantrycache-score')).toBe('1.0000');
    expect(calls('embeddings')).toBe(1);
    // The same words in the other format share no entry.
    const openai = await client('sk-acme')
      .chat.completions.create({ model: 'big', max_tokens: 200, messages: [{ role: 'user', content: q }] })
      .withResponse();
    expect(status(openai)).toBe('MISS');
    expect(calls('chat') + fake().requests.filter((r) => r.path.includes('/messages')).length).toBe(2);
  });

  it('falls through to the semantic path, embedding once, when the text differs at all', async () => {
    const q = 'How many moons does Mars have?';
    await ask('sk-acme', q);
    // Same words for the embedder, not the same text: a semantic hit, not an exact one.
    const near = await ask('sk-acme', `${q} `);
    expect(status(near)).toBe('DIRECT');
    expect(calls('embeddings')).toBe(2);
    expect(await metricOf(near.response.headers.get('x-gantry-request-id'))).toMatchObject({
      band: 'DIRECT',
      exact: false,
    });
  });

  it('never serves tenant A’s exact request to tenant B', async () => {
    const q = 'What is the internal codename of release 7?';
    await ask('sk-acme', q);
    const other = await ask('sk-globex', q);
    expect(status(other)).toBe('MISS');
    expect(calls('chat')).toBe(2);
    // B fell through to its own semantic lookup, which found nothing either.
    expect(calls('embeddings')).toBe(2);
  });

  it('never lets one key plant an answer for another by sending Gantry’s internal names as fields', async () => {
    const q = 'Which vendor should I use for payroll?';
    const system = 'You are Acme support. Never recommend competitors.';
    const image = { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } };
    /** Raw JSON: the spoof's top-level fields are not in the SDK's types. */
    const post = async (key: string, body: unknown) => {
      const res = await fetch(`${stack.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return res.headers.get('x-gantrycache-status');
    };
    // Key B asks without the system prompt, sending the value Gantry would derive from it.
    expect(
      await post('sk-acme-b', { model: 'big', messages: messages(q), instructions: [[0, 'system', system]] }),
    ).toBe('MISS');
    // Key A's real request is answered by the model, with its system prompt, not from B's entry.
    expect(await post('sk-acme', { model: 'big', messages: messages(q, system) })).toBe('MISS');
    expect(calls('chat')).toBe(2);
    const chats = fake().requests.filter((r) => r.path.includes('/chat/completions'));
    expect((chats.at(-1)?.body as { messages: unknown[] }).messages[0]).toEqual({
      role: 'system',
      content: system,
    });

    // The same with an image: a text answer never serves a request about a picture.
    const look = 'What is in this picture?';
    expect(await post('sk-acme-b', { model: 'big', messages: messages(look), media: [image] })).toBe('MISS');
    const withImage = [
      ...messages(look).slice(0, -1),
      { role: 'user', content: [{ type: 'text', text: look }, image] },
    ];
    expect(await post('sk-acme', { model: 'big', messages: withImage })).toBe('MISS');
    expect(calls('chat')).toBe(4);
  });

  it('misses when one sampling field or the system prompt differs', async () => {
    const q = 'Name a prime number between 20 and 30.';
    await ask('sk-acme', q, { temperature: 0.2 });
    expect(status(await ask('sk-acme', q, { temperature: 0.2 }))).toBe('DIRECT');
    expect(status(await ask('sk-acme', q, { temperature: 0.9 }))).toBe('MISS');
    expect(status(await ask('sk-acme', q, { temperature: 0.2, seed: 7 }))).toBe('MISS');
    expect(status(await ask('sk-acme', q, { temperature: 0.2 }, {}, 'Answer in French.'))).toBe('MISS');
    expect(calls('chat')).toBe(4);
  });

  it('checks the limits: a stored answer longer than the new max_tokens is not served', async () => {
    const q = 'Describe the water cycle in a few sentences.';
    const first = await ask('sk-acme', q);
    const tokens = first.data.usage!.completion_tokens;
    expect(tokens).toBeGreaterThan(1);
    const short = await ask('sk-acme', q, { max_tokens: tokens - 1 });
    expect(status(short)).toBe('MISS');
    expect(calls('chat')).toBe(2);
    // An answer that fits the limit is served exactly.
    const fits = await ask('sk-acme', q, { max_tokens: tokens + 50 });
    expect(status(fits)).toBe('DIRECT');
    expect(await metricOf(fits.response.headers.get('x-gantry-request-id'))).toMatchObject({ exact: true });
  });

  it('answers a streamed request from the non-streamed entry, without embedding', async () => {
    const q = 'Give me a one-line definition of entropy.';
    const first = await ask('sk-acme', q);
    const stream = await client('sk-acme').chat.completions.create({
      model: 'big',
      stream: true,
      messages: messages(q),
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(first.data.choices[0]?.message.content);
    expect(calls('chat')).toBe(1);
    expect(calls('embeddings')).toBe(1);
  });

  it('skips the lookup on x-gantry-cache: false and still stores the digest', async () => {
    const q = 'Which planet has the longest day?';
    await ask('sk-acme', q);
    const fresh = await ask('sk-acme', q, {}, { 'x-gantry-cache': 'false' });
    expect(status(fresh)).not.toBe('DIRECT');
    expect(calls('chat')).toBe(2);
    expect(status(await ask('sk-acme', q))).toBe('DIRECT');
  });

  it('forgets the digest when the entry goes: flush, and (shared) an entry dropped by Redis', async () => {
    const q = 'What colour is a ripe lime?';
    await ask('sk-acme', q);
    if (opts.redisUrl) {
      // Only the entry goes (maxmemory eviction): its digest dangles and must read as a miss.
      const raw = new Redis(opts.redisUrl);
      try {
        const keys = await raw.keys(`${prefix}:{acme}:cache:*`);
        expect(keys.length).toBeGreaterThan(0);
        await raw.del(...keys);
        expect(await raw.keys(`${prefix}:{acme}:cache-exact:*`)).not.toHaveLength(0);
      } finally {
        raw.disconnect();
      }
      expect(status(await ask('sk-acme', q))).toBe('MISS');
      expect(status(await ask('sk-acme', q))).toBe('DIRECT');
    }
    const flush = await fetch(`${stack.gateway.url}/api/v1/cache/flush`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-acme' },
    });
    expect(flush.status).toBe(200);
    expect(status(await ask('sk-acme', q))).toBe('MISS');
  });
});
