/**
 * The semantic cache end to end, once on in-process stores and once on a real Milvus Lite
 * plus a real redis-server: bands, TWEAK economics, skip rules, isolation, streaming replay.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { startMilvus, type MilvusInstance } from '../harness/milvus.ts';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';

const SPEC_THRESHOLDS = { direct: 0.95, reuse: 0.9, tweak: 0.85 };

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

describe.each(backends)('semantic cache on $name', ({ opts }) => {
  let stack: Stack;
  const fake = () => stack.fakes[0]!;
  const client = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });
  const upstreamCalls = () =>
    fake().requests.filter((r) => r.path.includes('/chat/completions') || r.path.includes('/messages'))
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
            name: 'cheap',
            model: 'cheap',
            baseUrl: fakeBase(url!),
            pricing: { inputPerMillionTokens: 0.1, outputPerMillionTokens: 0.2 },
          }),
          deployment({
            name: 'pricey',
            model: 'pricey',
            baseUrl: fakeBase(url!),
            pricing: { inputPerMillionTokens: 500, outputPerMillionTokens: 900 },
          }),
          deployment({
            name: 'embed',
            model: 'embed',
            baseUrl: fakeBase(url!),
            capabilities: ['embeddings'],
          }),
          // SPEC.md's thresholds, so each band is reachable (the builtin default is tighter); the
          // band examples were written for the lexical embedder's scores, so it is pinned.
          manifest('CachePolicy', 'tweaky', {
            tweakModel: 'cheap',
            thresholds: SPEC_THRESHOLDS,
            embeddingModel: 'builtin',
          }),
          manifest('CachePolicy', 'costly-tweak', {
            tweakModel: 'pricey',
            thresholds: SPEC_THRESHOLDS,
            embeddingModel: 'builtin',
          }),
          tenant('acme', ['*'], {
            tier: 'pro',
            wallet: { balanceUsd: 10 },
            cache: { enabled: true, policyRef: { name: 'tweaky' } },
          }),
          tenant('globex', ['*'], { cache: { enabled: true, policyRef: { name: 'tweaky' } } }),
          tenant('initech', ['*'], { cache: { enabled: true, policyRef: { name: 'costly-tweak' } } }),
          tenant('off', ['*'], { cache: { enabled: false } }),
          apiKey('acme', 'sk-acme', 'acme', { role: 'admin' }),
          apiKey('globex', 'sk-globex', 'globex'),
          apiKey('initech', 'sk-initech', 'initech'),
          apiKey('off', 'sk-off', 'off'),
        ].join(''),
      {
        ...opts,
        redisPrefix: `cache-${randomUUID()}`,
        env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_ADMIN_KEY: 'sk-platform-0123456789abcdef0123' },
      },
    );
  });
  afterAll(() => stack.close());
  beforeEach(() => fake().reset());

  /** Each test asks its own questions: entries of one test never answer another's. */
  const ask = (
    key: string,
    content: string,
    extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {},
    headers = {},
  ) =>
    client(key)
      .chat.completions.create({ model: 'big', messages: [{ role: 'user', content }], ...extra }, { headers })
      .withResponse();

  it('misses, stores, then answers the same question DIRECT without calling the provider', async () => {
    const first = await ask('sk-acme', 'What is the capital of France?');
    expect(first.response.headers.get('x-gantrycache-status')).toBe('MISS');
    const second = await ask('sk-acme', "what's the capital of France");
    expect(second.response.headers.get('x-gantrycache-status')).toBe('DIRECT');
    expect(Number(second.response.headers.get('x-gantrycache-score'))).toBeGreaterThanOrEqual(0.95);
    expect(Number(second.response.headers.get('x-gantrycache-tokens-saved'))).toBeGreaterThan(0);
    expect(second.response.headers.get('x-gantry-provider')).toBe('cache');
    expect(second.data.choices[0]?.message.content).toBe(first.data.choices[0]?.message.content);
    expect(upstreamCalls()).toBe(1);
  });

  it('answers a paraphrase REUSE and credits the tier share of the saving to the wallet', async () => {
    await ask('sk-acme', 'How do I reverse a list in Python?');
    const hit = await ask('sk-acme', 'How can I reverse a Python list?');
    expect(hit.response.headers.get('x-gantrycache-status')).toBe('REUSE');
    const score = Number(hit.response.headers.get('x-gantrycache-score'));
    expect(score).toBeGreaterThanOrEqual(0.9);
    expect(score).toBeLessThan(0.95);
    const ledger = await stack.gateway.stores.wallets.ledger('acme');
    const credit = ledger.find((e) => e.kind === 'cache_credit');
    expect(credit?.amountUsd).toBeGreaterThan(0);
    expect(Number(hit.response.headers.get('x-gantry-cost'))).toBeGreaterThan(credit!.amountUsd);
  });

  it('adapts a close-but-different question with the cheaper model (TWEAK) when that saves money', async () => {
    await ask('sk-globex', 'How do I reverse a list in Python?');
    fake().reset();
    const hit = await ask('sk-globex', 'How do I reverse a linked list in Python?');
    expect(hit.response.headers.get('x-gantrycache-status')).toBe('TWEAK');
    expect(hit.response.headers.get('x-gantry-provider')).toBe('cheap');
    const tweakCall = fake().requests.at(-1)?.body as { model: string; messages: { content: string }[] };
    expect(tweakCall.model).toBe('cheap');
    expect(JSON.stringify(tweakCall.messages)).toContain('Earlier answer');
    expect(fake().requests).toHaveLength(1);
  });

  it('declines TWEAK when adapting costs more than it saves: a MISS served by the model', async () => {
    await ask('sk-initech', 'How do I reverse a list in Python?');
    fake().reset();
    const res = await ask('sk-initech', 'How do I reverse a linked list in Python?');
    expect(res.response.headers.get('x-gantrycache-status')).toBe('MISS');
    expect((fake().requests.at(-1)?.body as { model: string }).model).toBe('big');
  });

  it('x-gantry-cache: false skips the lookup but still stores', async () => {
    await ask('sk-acme', 'Name three noble gases please');
    const skipped = await ask('sk-acme', 'Name three noble gases please', {}, { 'x-gantry-cache': 'false' });
    expect(skipped.response.headers.get('x-gantrycache-status')).toBeNull();
    expect(upstreamCalls()).toBe(2);
    const fresh = 'Which planet has the most moons, roughly?';
    await ask('sk-acme', fresh, {}, { 'x-gantry-cache': 'false' });
    const hit = await ask('sk-acme', fresh);
    expect(hit.response.headers.get('x-gantrycache-status')).toBe('DIRECT');
  });

  it('metadata.cache_bypass forces a fresh answer', async () => {
    await ask('sk-acme', 'Spell the word necessary');
    const res = await ask('sk-acme', 'Spell the word necessary', { metadata: { cache_bypass: 'true' } });
    expect(res.response.headers.get('x-gantrycache-status')).toBeNull();
    expect(upstreamCalls()).toBe(2);
    const body = fake().requests.at(-1)?.body as { metadata?: Record<string, unknown> };
    expect(body.metadata?.cache_bypass).toBeUndefined();
  });

  it('never caches requests with tools, tenants with the cache off, or other endpoints', async () => {
    const tools = [
      { type: 'function' as const, function: { name: 'f', parameters: { type: 'object', properties: {} } } },
    ];
    await ask('sk-acme', 'Use the tool for the weather', { tools, tool_choice: 'none' });
    const again = await ask('sk-acme', 'Use the tool for the weather', { tools, tool_choice: 'none' });
    expect(again.response.headers.get('x-gantrycache-status')).toBeNull();
    await ask('sk-off', 'A question for a tenant without cache');
    const off = await ask('sk-off', 'A question for a tenant without cache');
    expect(off.response.headers.get('x-gantrycache-status')).toBeNull();
    expect(upstreamCalls()).toBe(4);
    await client('sk-acme').embeddings.create({ model: 'embed', input: 'same text' });
    await client('sk-acme').embeddings.create({ model: 'embed', input: 'same text' });
    expect(fake().requests.filter((r) => r.path.includes('/embeddings'))).toHaveLength(2);
  });

  it('never serves one tenant another tenant’s answer', async () => {
    await ask('sk-acme', 'What is the secret launch date of project Zebra?');
    const other = await ask('sk-globex', 'What is the secret launch date of project Zebra?');
    expect(other.response.headers.get('x-gantrycache-status')).toBe('MISS');
    expect(upstreamCalls()).toBe(2);
  });

  it('keeps OpenAI and Anthropic formats apart', async () => {
    await ask('sk-acme', 'Describe a haiku in one line');
    const anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: 'sk-acme', maxRetries: 0 });
    const { response } = await anthropic.messages
      .create({
        model: 'big',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Describe a haiku in one line' }],
      })
      .withResponse();
    expect(response.headers.get('x-gantrycache-status')).toBe('MISS');
  });

  it('returns the stored x-gantry-cache-meta on a hit', async () => {
    await ask('sk-acme', 'Convert 10 miles to kilometres', {}, { 'x-gantry-cache-meta': 'run-42' });
    const hit = await ask('sk-acme', 'Convert 10 miles to kilometres');
    expect(hit.response.headers.get('x-gantrycache-matched-meta')).toBe('run-42');
  });

  it('replays a hit as SSE that the OpenAI SDK reads like a live stream', async () => {
    const q = 'Give me a short motto about reliability';
    await ask('sk-acme', q);
    const stream = await client('sk-acme').chat.completions.create({
      model: 'big',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: q }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(fakeAnswer(q));
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(upstreamCalls()).toBe(1);
  });

  it('replays a hit as SSE that the Anthropic SDK reads like a live stream', async () => {
    const q = 'Give me a short motto about gateways';
    const anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: 'sk-acme', maxRetries: 0 });
    await anthropic.messages.create({
      model: 'big',
      max_tokens: 200,
      messages: [{ role: 'user', content: q }],
    });
    const stream = anthropic.messages.stream({
      model: 'big',
      max_tokens: 200,
      messages: [{ role: 'user', content: q }],
    });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe(fakeAnswer(q));
    expect(final.stop_reason).toBe('end_turn');
    expect(upstreamCalls()).toBe(1);
  });

  it('stores streamed answers too', async () => {
    const q = 'Stream me a fact about octopuses';
    const stream = await client('sk-acme').chat.completions.create({
      model: 'big',
      stream: true,
      messages: [{ role: 'user', content: q }],
    });
    for await (const _ of stream) void _;
    const hit = await ask('sk-acme', q);
    expect(hit.response.headers.get('x-gantrycache-status')).toBe('DIRECT');
    expect(hit.data.choices[0]?.message.content).toBe(fakeAnswer(q));
  });

  it('reports metrics and stats, and flushes', async () => {
    const auth = { authorization: 'Bearer sk-acme' };
    const metrics = (await (
      await fetch(`${stack.gateway.url}/api/v1/cache/metrics?limit=5`, { headers: auth })
    ).json()) as {
      data: { band: string; score: number | null; tokens_saved: number; latency_ms: number }[];
    };
    expect(metrics.data.length).toBe(5);
    expect(metrics.data.some((m) => m.band === 'DIRECT')).toBe(true);
    type Stats = { status: string; tenant_id: string | null; entries: number | null };
    const statsOf = async (key: string) =>
      (await (
        await fetch(`${stack.gateway.url}/api/v1/cache/stats`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as Stats;
    const stats = await statsOf('sk-platform-0123456789abcdef0123');
    expect(stats.status).toBe('ok');
    expect(stats.entries).toBeGreaterThan(0);
    // A tenant admin gets its own tenant's numbers, never the global ones.
    const own = await statsOf('sk-acme');
    expect(own.tenant_id).toBe('acme');
    expect(own.entries).toBeGreaterThan(0);
    expect(own.entries).toBeLessThan(stats.entries!);
    const flush = await fetch(`${stack.gateway.url}/api/v1/cache/flush`, { method: 'POST', headers: auth });
    expect(flush.status).toBe(200);
    const q = 'What is the capital of France?';
    const after = await ask('sk-acme', q);
    expect(after.response.headers.get('x-gantrycache-status')).toBe('MISS');
    const user = await fetch(`${stack.gateway.url}/api/v1/cache/flush`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-globex' },
    });
    expect(user.status).toBe(403);
  });
});

describe('semantic cache when its stores go away', () => {
  let milvus: MilvusInstance;
  let redis: RedisInstance;
  let stack: Stack;

  beforeAll(async () => {
    [milvus, redis] = await Promise.all([startMilvus(), startRedis()]);
    stack = await startStack(
      ([url]) =>
        [
          deployment({ name: 'big', model: 'big', baseUrl: fakeBase(url!) }),
          tenant('acme', ['*'], { cache: { enabled: true } }),
          apiKey('acme', 'sk-acme', 'acme', { role: 'admin' }),
        ].join(''),
      { milvusAddress: milvus.address, milvusConsistency: 'Strong', redisUrl: redis.url },
    );
  });
  afterAll(async () => {
    await stack.close();
    await Promise.all([milvus.stop(), redis.stop()]);
  });

  const failures = async () => {
    const text = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('gantry_cache_failures_total{'))
      .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
  };

  it('fails open when Milvus is down: the model answers, a metric counts it', async () => {
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: 'sk-acme', maxRetries: 0 });
    await milvus.stop();
    const before = await failures();
    const res = await client.chat.completions
      .create({ model: 'big', messages: [{ role: 'user', content: 'Is the cache up?' }] })
      .withResponse();
    expect(res.response.status).toBe(200);
    expect(res.data.choices[0]?.message.content).toBe(fakeAnswer('Is the cache up?'));
    expect(await failures()).toBeGreaterThan(before);
  });
});
