/** `POST /v1/moderations` through the official client: Gantry's own verdicts, and proxied deployments. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_FLAG_WORD } from '../../dataplane/src/fake-provider/openai-extra.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-moderations';
const NARROW_KEY = 'sk-moderations-narrow';
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!), capabilities: ['chat'] }),
      deployment({
        name: 'mod',
        model: 'mod-test',
        upstreamModel: 'omni-upstream',
        baseUrl: fakeBase(url!),
        capabilities: ['moderations'],
        pricing: { inputPerMillionTokens: 10, outputPerMillionTokens: 0 },
      }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
      apiKey('narrow-key', NARROW_KEY, 'acme', { models: ['gpt-test'] }),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

describe("Gantry's own moderation (no deployment serves moderations)", () => {
  it('passes a benign text, with every OpenAI category present and nothing charged', async () => {
    const { data, response } = await client.moderations
      .create({ input: 'What a lovely afternoon for a walk.' })
      .withResponse();
    expect(data.model).toBe('gantry-guardrails');
    expect(data.id).toMatch(/^modr-/);
    const result = data.results[0]!;
    expect(result.flagged).toBe(false);
    expect(Object.keys(result.categories)).toEqual(
      expect.arrayContaining(['harassment', 'self-harm', 'violence']),
    );
    expect(result.category_scores.harassment).toBe(0);
    expect(response.headers.get('x-gantry-provider')).toBe('gantry-guardrails');
    expect(response.headers.get('x-gantry-cost')).toBe('0.0');
    const record = await usageRecord(stack, 'acme', response.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({
      endpoint: 'moderations',
      status: 200,
      costUsd: 0,
      requestedModel: 'omni-moderation-latest',
    });
    expect(record.promptTokens).toBeGreaterThan(0);
  });

  it('flags abuse, threats, self-harm and leaked secrets, one result per input', async () => {
    const data = await client.moderations.create({
      input: [
        'You are a complete idiot.',
        'I will kill you if you publish that.',
        'I want to kill myself.',
        'aws_access_key_id = AKIA7ZX27UVEZLVP5OBV',
        'The meeting is at noon.',
      ],
    });
    const [insult, threat, selfHarm, secret, fine] = data.results;
    expect(insult?.flagged && insult.categories.harassment).toBe(true);
    expect(threat?.categories['harassment/threatening']).toBe(true);
    expect(threat?.categories.violence).toBe(true);
    expect(selfHarm?.categories['self-harm']).toBe(true);
    const extra = secret as unknown as { flagged: boolean; categories: Record<string, boolean> };
    expect(extra.flagged).toBe(true);
    expect(extra.categories['gantry/secrets']).toBe(true);
    expect(fine?.flagged).toBe(false);
  });

  it('judges the text parts of a multimodal input as one', async () => {
    const data = await client.moderations.create({
      model: 'omni-moderation-latest',
      input: [
        { type: 'text', text: 'Look at this.' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        { type: 'text', text: 'You absolute halfwit.' },
      ],
    });
    expect(data.results).toHaveLength(1);
    expect(data.results[0]?.categories.harassment).toBe(true);
  });

  it('answers for a configured model without the capability, once the key may use it', async () => {
    const narrow = new OpenAI({ baseURL: stack.baseURL, apiKey: NARROW_KEY, maxRetries: 0 });
    const data = await narrow.moderations.create({ model: 'gpt-test', input: 'hello' });
    expect(data.model).toBe('gantry-guardrails');
    const denied = await narrow.moderations
      .create({ model: 'mod-test', input: 'hello' })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OpenAI.NotFoundError);
    expect((denied as InstanceType<typeof OpenAI.NotFoundError>).message).toContain('mod-test');
  });
});

describe('moderations proxied to a deployment with the capability', () => {
  it('forwards to the upstream model and charges its price', async () => {
    stack.fakes[0]!.reset();
    const { data, response } = await client.moderations
      .create({ model: 'mod-test', input: [`please ${FAKE_FLAG_WORD}`, 'fine'] })
      .withResponse();
    expect(data.model).toBe('mod-test');
    expect(data.results.map((r) => r.flagged)).toEqual([true, false]);
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/moderations');
    expect(sent.body).toMatchObject({ model: 'omni-upstream' });
    expect(response.headers.get('x-gantry-provider')).toBe('mod');
    const cost = Number(response.headers.get('x-gantry-cost'));
    expect(cost).toBeGreaterThan(0);
    const record = await usageRecord(stack, 'acme', response.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'moderations', deployment: 'mod', costUsd: cost });
  });
});

describe('bad requests', () => {
  const post = (body: unknown, key = KEY) =>
    fetch(`${stack.baseURL}/moderations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('names a missing or malformed input', async () => {
    const res = await post({ model: 'omni-moderation-latest' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('input');
    expect((await post({ input: [] })).status).toBe(400);
  });

  it('is a 404 for a model that is neither configured nor a moderation model', async () => {
    const res = await post({ model: 'no-such-model', input: 'x' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('model_not_found');
  });

  it('is a 401 without a valid key', async () => {
    expect((await post({ input: 'x' }, 'sk-wrong')).status).toBe(401);
  });
});
