/**
 * A conversation chained with previous_response_id (or previous_interaction_id) is rebuilt
 * from the store and sent upstream whole, so without a bound a client could grow it turn by
 * turn far past the request body limit that bounds everything it may send at once (and with
 * compression on, no upstream context window stops it either: the stored history is the
 * uncompressed one). Continuing a conversation larger than one request body is a 400.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-chain-bound';
const BODY_LIMIT = 64 * 1024;
/** About 35 KB of varied text: two turns fit under the limit, three do not. */
const bulky = (turn: number): string =>
  Array.from({ length: 1500 }, (_, j) => `entry${turn}x${j} holds ${j * 13 + turn}`).join('; ');

let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'gpt-test', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        apiKey('acme-key', KEY, 'acme'),
      ].join(''),
    { bodyLimitBytes: BODY_LIMIT },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const upstreamCalls = () => stack.fakes[0]!.requests.length;

describe('a chained conversation is bounded by the request body limit', () => {
  it('refuses to continue a stored conversation larger than one request body, naming the field', async () => {
    const first = await client.responses.create({ model: 'gpt-test', input: bulky(0) });
    const second = await client.responses.create({
      model: 'gpt-test',
      previous_response_id: first.id,
      input: bulky(1),
    });
    expect(second.status).toBe('completed');

    const before = upstreamCalls();
    const err = await client.responses
      .create({ model: 'gpt-test', previous_response_id: second.id, input: 'and now?' })
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(err?.status).toBe(400);
    expect(err?.error).toMatchObject({ type: 'invalid_request_error', param: 'previous_response_id' });
    expect(err?.message).toContain(`${BODY_LIMIT}-byte`);
    expect(err?.message).toContain(second.id);
    // Refused before any model call.
    expect(upstreamCalls()).toBe(before);

    // The way out the message names: compacting the conversation still works.
    const compacted = await client.responses.compact({ model: 'gpt-test', previous_response_id: second.id });
    expect(compacted.output.at(-1)?.type).toBe('compaction');
  });

  it('bounds previous_interaction_id chains the same way', async () => {
    const post = async (body: unknown) => {
      const res = await fetch(`${stack.baseURL}/interactions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const first = await post({ model: 'gpt-test', input: bulky(0) });
    expect(first.status).toBe(200);
    const second = await post({ model: 'gpt-test', input: bulky(1), previous_interaction_id: first.json.id });
    expect(second.status).toBe(200);
    const before = upstreamCalls();
    const third = await post({
      model: 'gpt-test',
      input: 'and now?',
      previous_interaction_id: second.json.id,
    });
    expect(third.status).toBe(400);
    expect(third.json.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'previous_interaction_id',
    });
    expect(upstreamCalls()).toBe(before);
  });
});
