/**
 * Images through the official openai client: generations (url and b64_json), edits and
 * variations (multipart), priced per image in the header and the key's budget, with the
 * upload limit (413), media type (400) and access checks at the edge.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_PNG } from '../../dataplane/src/fake-provider/openai-media.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-media-images';
const CHAT_ONLY_KEY = 'sk-media-chat-only';
const PER_IMAGE = 0.04;
const BUDGET = { limitUsd: 5, period: 'monthly' as const };
const UPLOAD_LIMIT = 64 * 1024;
const PRICING = { inputPerMillionTokens: 1, outputPerMillionTokens: 2, perImage: PER_IMAGE };

let stack: Stack;
let client: OpenAI;
/** Every cost the gateway reported to this key, in micro-dollars. */
let chargedMicros = 0;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'img-openai',
          model: 'img',
          upstreamModel: 'gpt-image-up',
          baseUrl: fakeBase(url!),
          capabilities: ['images'],
          extra: { pricing: PRICING },
        }),
        deployment({
          name: 'img-azure',
          model: 'img-azure',
          provider: 'azure-openai',
          baseUrl: fakeBase(url!, 'azure-openai'),
          capabilities: ['images'],
          extra: { pricing: PRICING, apiVersion: '2024-10-21' },
        }),
        deployment({ name: 'chat', model: 'chat', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        apiKey('images', KEY, 'acme', { budget: BUDGET }),
        apiKey('chat-only', CHAT_ONLY_KEY, 'acme', { models: ['chat'] }),
      ].join(''),
    { maxUploadBytes: UPLOAD_LIMIT },
  );
  client = new OpenAI({ apiKey: KEY, baseURL: stack.baseURL, maxRetries: 0 });
});
afterAll(() => stack.close());

/** The cost header as whole micro-dollars, counted towards the budget check. */
function charged(headers: Headers): number {
  const micros = Math.round(Number(headers.get('x-gantry-cost')) * 1e6);
  chargedMicros += micros;
  return micros / 1e6;
}

const png = () => toFile(FAKE_PNG, 'cat.png');

describe('POST /v1/images/generations', () => {
  it('answers url images, charged per image', async () => {
    const { data, response } = await client.images
      .generate({ model: 'img', prompt: 'a red fox', n: 2, size: '1024x1024' })
      .withResponse();
    expect(data.data).toHaveLength(2);
    for (const image of data.data ?? []) expect(image.url).toMatch(/^https:\/\/fake-provider\.invalid\//);
    expect(typeof data.created).toBe('number');
    expect(charged(response.headers)).toBe(2 * PER_IMAGE);
    expect(response.headers.get('x-gantry-provider')).toBe('img-openai');
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.body).toMatchObject({ model: 'gpt-image-up', prompt: 'a red fox', n: 2 });
  });

  it('answers b64_json images; large hd images cost four units each', async () => {
    const { data, response } = await client.images
      .generate({
        model: 'img',
        prompt: 'a lighthouse',
        size: '1792x1024',
        quality: 'hd',
        response_format: 'b64_json',
      })
      .withResponse();
    expect(Buffer.from(data.data![0]!.b64_json!, 'base64').equals(FAKE_PNG)).toBe(true);
    expect(charged(response.headers)).toBeCloseTo(4 * PER_IMAGE, 10);
  });

  it('reaches Azure OpenAI at the deployment path', async () => {
    const { data, response } = await client.images
      .generate({ model: 'img-azure', prompt: 'a boat' })
      .withResponse();
    expect(data.data).toHaveLength(1);
    expect(charged(response.headers)).toBe(PER_IMAGE);
    expect(stack.fakes[0]!.requests.at(-1)!.path).toBe(
      '/openai/deployments/img-azure/images/generations?api-version=2024-10-21',
    );
  });

  it('refuses a bad n, a model without images and a key without the model', async () => {
    await expect(client.images.generate({ model: 'img', prompt: 'x', n: 11 })).rejects.toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', param: 'n' },
    });
    await expect(client.images.generate({ model: 'chat', prompt: 'x' })).rejects.toMatchObject({
      status: 400,
      error: { type: 'unsupported_endpoint', message: expect.stringContaining('/v1/images/generations') },
    });
    // A size no provider renders is refused before the call: it was priced (and, left before
    // the provider's 400, charged) as thousands of images.
    const sent = stack.fakes[0]!.requests.length;
    await expect(
      client.images.generate({ model: 'img', prompt: 'x', size: '99999x99999' as '1024x1024' }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', param: 'size', message: expect.stringContaining('4096') },
    });
    expect(stack.fakes[0]!.requests.length).toBe(sent);
    const chatOnly = new OpenAI({ apiKey: CHAT_ONLY_KEY, baseURL: stack.baseURL, maxRetries: 0 });
    await expect(chatOnly.images.generate({ model: 'img', prompt: 'x' })).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe('POST /v1/images/edits and /v1/images/variations (multipart)', () => {
  it('forwards the upload and the prompt, charged per image', async () => {
    const { data, response } = await client.images
      .edit({ model: 'img', prompt: 'add a hat', image: await png(), mask: await png(), n: 3 })
      .withResponse();
    expect(data.data).toHaveLength(3);
    expect(charged(response.headers)).toBeCloseTo(3 * PER_IMAGE, 10);
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.body).toMatchObject({
      model: 'gpt-image-up',
      prompt: 'add a hat',
      n: '3',
      image: { type: 'image/png', size: FAKE_PNG.length },
      mask: { type: 'image/png', size: FAKE_PNG.length },
    });
  });

  it('variations need no prompt', async () => {
    const { data, response } = await client.images
      .createVariation({ model: 'img', image: await png(), response_format: 'b64_json' })
      .withResponse();
    expect(Buffer.from(data.data![0]!.b64_json!, 'base64').equals(FAKE_PNG)).toBe(true);
    expect(charged(response.headers)).toBe(PER_IMAGE);
  });

  it('refuses a file that is not an image with a 400 naming its type', async () => {
    const pdf = await toFile(Buffer.from('%PDF-1.7\n...'), 'doc.png');
    await expect(client.images.edit({ model: 'img', prompt: 'x', image: pdf })).rejects.toMatchObject({
      status: 400,
      error: { param: 'image', message: expect.stringContaining('application/pdf') },
    });
  });

  it('refuses a file over the upload limit with a 413 naming the limit', async () => {
    const big = Buffer.concat([FAKE_PNG, Buffer.alloc(UPLOAD_LIMIT + 1)]);
    const before = stack.fakes[0]!.requests.length;
    await expect(
      client.images.edit({ model: 'img', prompt: 'x', image: await toFile(big, 'big.png') }),
    ).rejects.toMatchObject({
      status: 413,
      error: { type: 'request_too_large', code: 413, message: expect.stringContaining('64 KB') },
    });
    expect(stack.fakes[0]!.requests.length).toBe(before);
  });

  it('answers JSON sent to a multipart route with a 415', async () => {
    const res = await fetch(`${stack.baseURL}/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'img', prompt: 'x' }),
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({
      error: { type: 'unsupported_media_type', message: expect.stringContaining('multipart/form-data') },
    });
  });

  it('asks for a key before reading an upload', async () => {
    const res = await fetch(`${stack.baseURL}/images/variations`, { method: 'POST', body: new FormData() });
    expect(res.status).toBe(401);
  });
});

describe('money', () => {
  it("the key's budget spend is the sum of the charged costs", async () => {
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/images' },
      BUDGET,
    );
    expect(chargedMicros).toBeGreaterThan(0);
    expect(Math.round(state.spentUsd * 1e6)).toBe(chargedMicros);
  });
});
