/**
 * Issue 9 (4–7) and 10 (8), tried as a hostile or unlucky user would against a real gateway
 * on the default cache (builtin embedder, default thresholds) with the fake provider: no
 * answer made for another system prompt, another model or another question's facts; one
 * tenant cannot flush another's entries by volume; cache stats are scoped to the caller.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';

const on = { cache: { enabled: true } };
const PRICE_A = { inputPerMillionTokens: 1, outputPerMillionTokens: 2 };
const PRICE_B = { inputPerMillionTokens: 40, outputPerMillionTokens: 80 };
const PRICE_C = { inputPerMillionTokens: 0.01, outputPerMillionTokens: 0.02 };

describe('semantic cache under attack', () => {
  let stack: Stack;
  const fake = () => stack.fakes[0]!;
  const calls = () => fake().requests.filter((r) => r.path.includes('/chat/completions')).length;
  const client = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });
  const chat = (key: string, body: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming>) =>
    client(key)
      .chat.completions.create({ model: 'model-a', messages: [], ...body })
      .withResponse();
  const ask = (
    key: string,
    content: string,
    extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {},
  ) => chat(key, { messages: [{ role: 'user', content }], ...extra });
  const status = (r: { response: Response }) => r.response.headers.get('x-gantrycache-status');

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({ name: 'model-a', model: 'model-a', baseUrl: fakeBase(url!), pricing: PRICE_A }),
          deployment({ name: 'model-b', model: 'model-b', baseUrl: fakeBase(url!), pricing: PRICE_B }),
          tenant('shared', ['*'], on),
          apiKey('alice', 'sk-alice', 'shared'),
          apiKey('bob', 'sk-bob', 'shared'),
          // Difficulty routing sends everything to model-b when the key may use it.
          tenant('routed', ['*'], {
            ...on,
            routing: {
              enabled: true,
              levels: {
                trivial: { model: 'model-b' },
                standard: { model: 'model-b' },
                complex: { model: 'model-b' },
              },
            },
          }),
          apiKey('free', 'sk-free', 'routed'),
          apiKey('only-a', 'sk-only-a', 'routed', { models: ['model-a'] }),
          deployment({ name: 'model-c', model: 'model-c', baseUrl: fakeBase(url!), pricing: PRICE_C }),
          manifest('CachePolicy', 'adapt', {
            tweakModel: 'model-c',
            // The band examples below were written for the lexical embedder's scores.
            embeddingModel: 'builtin',
            thresholds: { direct: 0.95, reuse: 0.9, tweak: 0.85 },
          }),
          tenant('adapting', ['*'], { cache: { enabled: true, policyRef: { name: 'adapt' } } }),
          apiKey('adapt-any', 'sk-adapt-any', 'adapting'),
          apiKey('adapt-only-a', 'sk-adapt-only-a', 'adapting', { models: ['model-a'] }),
          tenant('quiet', ['*'], on),
          apiKey('quiet-admin', 'sk-quiet', 'quiet', { role: 'admin' }),
          tenant('noisy', ['*'], on),
          apiKey('noisy', 'sk-noisy', 'noisy'),
        ].join(''),
      {
        cacheMemory: { maxEntries: 24 },
        env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_ADMIN_KEY: 'sk-platform-0123456789abcdef0123' },
      },
    );
  });
  afterAll(() => stack.close());
  beforeEach(() => fake().reset());

  describe('everything that changes the answer keeps answers apart (9.4)', () => {
    const q = 'What should I say to a customer asking for a refund?';
    const sys = (content: string): OpenAI.ChatCompletionMessageParam => ({ role: 'system', content });
    // Lexically close (DualScore 0.95 by the context embedding alone), opposite in effect.
    const ENGLISH = 'You are the support agent of Acme Corp. Always reply in English and offer a refund.';
    const FRENCH = 'You are the support agent of Acme Corp. Always reply in French and never offer a refund.';

    it('never serves one system prompt the answer made for another', async () => {
      const first = await chat('sk-alice', {
        messages: [sys(ENGLISH), { role: 'user', content: q }],
      });
      expect(status(first)).toBe('MISS');
      const same = await chat('sk-alice', {
        messages: [sys(ENGLISH), { role: 'user', content: q }],
      });
      expect(status(same)).toBe('DIRECT'); // the test can fail: the same prompt does hit
      const other = await chat('sk-bob', {
        messages: [sys(FRENCH), { role: 'user', content: q }],
      });
      expect(status(other)).toBe('MISS');
      const none = await chat('sk-bob', { messages: [{ role: 'user', content: q }] });
      expect(status(none)).toBe('MISS');
      expect(calls()).toBe(3);
    });

    it('never serves an answer made for other earlier turns, sampling or developer instructions', async () => {
      const q2 = 'And what is the right dose then?';
      const turns = (weight: string): OpenAI.ChatCompletionMessageParam[] => [
        { role: 'user', content: `My dog weighs ${weight}.` },
        { role: 'assistant', content: 'Noted.' },
        { role: 'user', content: q2 },
      ];
      await chat('sk-alice', { messages: turns('30 kg') });
      expect(status(await chat('sk-alice', { messages: turns('30 kg') }))).toBe('DIRECT');
      expect(status(await chat('sk-alice', { messages: turns('3 kg') }))).toBe('MISS');
      expect(status(await chat('sk-alice', { messages: turns('30 kg'), temperature: 1.5 }))).toBe('MISS');
      expect(status(await chat('sk-alice', { messages: turns('30 kg'), seed: 42 }))).toBe('MISS');
      const dev: OpenAI.ChatCompletionMessageParam = { role: 'developer', content: 'Answer in German.' };
      expect(status(await chat('sk-alice', { messages: [dev, ...turns('30 kg')] }))).toBe('MISS');
    });
  });

  describe('model access and price (9.5)', () => {
    it('a key restricted to model A never gets model B’s cached answer and pays A’s price', async () => {
      const q = 'Summarise the causes of the French Revolution in two sentences.';
      const routed = await ask('sk-free', q);
      expect(routed.data.model).toBe('model-b');
      expect(status(routed)).toBe('MISS');

      const restricted = await ask('sk-only-a', q);
      expect(status(restricted)).toBe('MISS');
      expect(restricted.data.model).toBe('model-a');
      expect((fake().requests.at(-1)?.body as { model: string }).model).toBe('model-a');

      const hit = await ask('sk-only-a', q);
      expect(status(hit)).toBe('DIRECT');
      expect(hit.data.model).toBe('model-a');
      const costOf = (r: { response: Response }) => Number(r.response.headers.get('x-gantry-cost'));
      // Charged like the call the hit replaced, at model A's price (not B's).
      const at = (price: typeof PRICE_A, u: OpenAI.CompletionUsage) =>
        (u.prompt_tokens * price.inputPerMillionTokens + u.completion_tokens * price.outputPerMillionTokens) /
        1e6;
      expect(costOf(hit)).toBeCloseTo(at(PRICE_A, hit.data.usage!), 6);
      expect(costOf(hit)).toBeLessThan(costOf(routed) / 10);

      // The unrestricted key is routed to B and gets B's entry, at B's price.
      const routedHit = await ask('sk-free', q);
      expect(status(routedHit)).toBe('DIRECT');
      expect(routedHit.data.model).toBe('model-b');
      expect(costOf(routedHit)).toBeCloseTo(at(PRICE_B, routedHit.data.usage!), 6);
    });

    it('a TWEAK adaptation by a model the key may not use becomes a MISS', async () => {
      await ask('sk-adapt-any', 'How do I reverse a list in Python?');
      const any = await ask('sk-adapt-any', 'How do I reverse a linked list in Python?');
      expect(status(any)).toBe('TWEAK'); // the test can fail: an allowed key is adapted
      expect(any.response.headers.get('x-gantry-provider')).toBe('model-c');
      fake().reset();
      const onlyA = await ask('sk-adapt-only-a', 'How do I reverse a linked list in Python?');
      expect(status(onlyA)).toBe('MISS');
      expect(onlyA.data.model).toBe('model-a');
      expect(fake().requests.map((r) => (r.body as { model: string }).model)).toEqual(['model-a']);
    });
  });

  describe('look-alike questions on the default cache (9.6)', () => {
    it.each([
      [
        'dosage',
        'What is the max paracetamol dose for a 60 kg adult?',
        'What is the max paracetamol dose for a 6 kg adult?',
      ],
      [
        'SQL',
        'Write a SQL query to SELECT all rows from the orders table',
        'Write a SQL query to DELETE all rows from the orders table',
      ],
      ['amount', 'Transfer $500 from checking to savings', 'Transfer $5000 from checking to savings'],
      ['negation', 'Is it safe to mix bleach and vinegar?', 'Is it not safe to mix bleach and vinegar?'],
      ['entity', 'Is Paris bigger than Rome?', 'Is London bigger than Rome?'],
      ['operand order', 'How do I convert Celsius to Fahrenheit?', 'How do I convert Fahrenheit to Celsius?'],
    ])('%s: the look-alike never hits, a paraphrase does', async (_kind, original, lookalike) => {
      await ask('sk-alice', original);
      const res = await ask('sk-alice', lookalike);
      expect(status(res)).toBe('MISS');
      expect(res.data.choices[0]?.message.content).toContain(lookalike.slice(0, 20));
      expect(status(await ask('sk-alice', original.toLowerCase()))).toBe('DIRECT');
    });
  });

  describe('the default embedder is semantic (13.2)', () => {
    it('serves a reworded question that shares few words with the stored one', async () => {
      // DualScore 0.97 with minilm, 0.77 with the lexical embedder (a MISS there).
      expect(status(await ask('sk-bob', 'What is the best way to learn Spanish quickly?'))).toBe('MISS');
      const res = await ask('sk-bob', 'What is the fastest way to learn Spanish?');
      expect(['DIRECT', 'REUSE']).toContain(status(res));
    });
  });

  describe('fair in-process bounds and scoped stats (9.7, 10.8)', () => {
    const quietQuestions = ['How do tides work?', 'Why do leaves change colour?', 'What makes bread rise?'];
    type Stats = { tenant_id: string | null; entries: number; memory_bytes: number };
    const stats = async (key: string, tenantId?: string) => {
      const url = `${stack.gateway.url}/api/v1/cache/stats${tenantId ? `?tenant_id=${tenantId}` : ''}`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, body: (await res.json()) as Stats };
    };

    it('one tenant flooding the cache does not evict another tenant’s entries', async () => {
      for (const q of quietQuestions) await ask('sk-quiet', q);
      for (let i = 0; i < 60; i++) await ask('sk-noisy', `Flood question number ${i}: name a colour`);
      fake().reset();
      for (const q of quietQuestions) expect(status(await ask('sk-quiet', q))).toBe('DIRECT');
      expect(calls()).toBe(0);
    });

    it('a tenant admin sees its own tenant only; the platform sees all or one, labelled', async () => {
      const own = await stats('sk-quiet');
      expect(own.status).toBe(200);
      expect(own.body).toMatchObject({ tenant_id: 'quiet', entries: quietQuestions.length });
      expect(own.body.memory_bytes).toBeGreaterThan(0);
      const all = await stats('sk-platform-0123456789abcdef0123');
      expect(all.body.tenant_id).toBeNull();
      expect(all.body.entries).toBeGreaterThan(own.body.entries);
      const one = await stats('sk-platform-0123456789abcdef0123', 'quiet');
      expect(one.body).toMatchObject({ tenant_id: 'quiet', entries: own.body.entries });
      expect((await stats('sk-quiet', 'noisy')).status).toBe(403);
    });
  });
});
