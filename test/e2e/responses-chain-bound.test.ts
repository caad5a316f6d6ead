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
/** About 35 KB of varied text (by default): two turns fit under the limit, three do not. */
const bulky = (turn: number, entries = 1500): string =>
  Array.from({ length: entries }, (_, j) => `entry${turn}x${j} holds ${j * 13 + turn}`).join('; ');

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

  it('compaction is a way out: its output can be sent back and the conversation continued', async () => {
    // Five user turns of ~14 KB: the user messages alone are past the body limit, so the
    // compacted output cannot carry them all (before, it did, and sending it back was a 413).
    let last: OpenAI.Responses.Response | undefined;
    const turns = [0, 1, 2, 3, 4].map((t) => bulky(t, 600));
    for (const input of turns)
      last = await client.responses.create({
        model: 'gpt-test',
        input,
        previous_response_id: last?.id ?? null,
      });
    const refused = await client.responses
      .create({ model: 'gpt-test', previous_response_id: last!.id, input: 'and now?' })
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(refused?.status).toBe(400);

    const compacted = await client.responses.compact({ model: 'gpt-test', previous_response_id: last!.id });
    const kept = compacted.output.filter((o) => o.type === 'message') as { content: { text: string }[] }[];
    // The newest user turns that fit in half a body, in order; the summary stands for the rest.
    expect(kept.map((m) => m.content[0]!.text)).toEqual(turns.slice(-2));
    expect(compacted.output.at(-1)?.type).toBe('compaction');
    expect(Buffer.byteLength(JSON.stringify(compacted.output))).toBeLessThan(BODY_LIMIT);

    const input = [
      ...compacted.output,
      { role: 'user', content: 'and now?' },
    ] as OpenAI.Responses.ResponseInputItem[];
    const next = await client.responses.create({ model: 'gpt-test', input });
    expect(next.status).toBe('completed');
    const sent = stack.fakes[0]!.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'user', 'system', 'user']);
    expect(sent.messages.at(-1)!.content).toBe('and now?');
  });

  it('compacted output fits when sent back by a client that escapes non-ASCII', async () => {
    // What Python's json.dumps (and requests' json=) send by default: 6 bytes per UTF-16
    // unit, where UTF-8 takes 4 for an emoji's two. Four turns of 8 KB UTF-8, 24 KB escaped:
    // measured as UTF-8, three were kept, 72 KB sent back this way, a 413.
    const turns = [0, 1, 2, 3].map((t) => `${t} ${'\u{1F600}'.repeat(2000)}`);
    let last: OpenAI.Responses.Response | undefined;
    for (const input of turns)
      last = await client.responses.create({
        model: 'gpt-test',
        input,
        previous_response_id: last?.id ?? null,
      });
    const compacted = await client.responses.compact({ model: 'gpt-test', previous_response_id: last!.id });
    const kept = compacted.output.filter((o) => o.type === 'message') as { content: { text: string }[] }[];
    expect(kept.map((m) => m.content[0]!.text)).toEqual(turns.slice(-1));

    const asciiJson = (v: unknown): string =>
      JSON.stringify(v).replace(
        /[\u0080-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
    const body = asciiJson({
      model: 'gpt-test',
      input: [...compacted.output, { role: 'user', content: 'next' }],
    });
    expect(body.length).toBeLessThan(BODY_LIMIT);
    const res = await fetch(`${stack.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
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
