/**
 * A parameter past the upstream's own cap (OpenAI: legacy `logprobs` at most 5, chat
 * `top_logprobs` at most 20) is the caller's fault: the official openai client gets a 400
 * naming the parameter, no other deployment is asked the same refused question, and the
 * deployment every tenant shares keeps a closed circuit and serves the next request at once.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { failure } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-param-caps';
/** The breaker opens at three faults: each case repeats its request three times. */
const TRIES = 3;
const CAPABILITIES = ['chat', 'completions'];

let stack: Stack;
let openai: OpenAI;
const fake = () => stack.fakes[0]!;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'first',
          model: 'm',
          upstreamModel: 'm-first',
          baseUrl: fakeBase(url!),
          priority: 1,
          capabilities: CAPABILITIES,
        }),
        deployment({
          name: 'second',
          model: 'm',
          upstreamModel: 'm-second',
          baseUrl: fakeBase(url!),
          priority: 2,
          capabilities: CAPABILITIES,
        }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { breaker: { failureThreshold: TRIES, baseOpenMs: 60_000, maxOpenMs: 60_000 } },
  );
  openai = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  fake().reset();
  stack.gateway.health.reset();
});

const callsTo = (model: string): number =>
  fake().requests.filter((r) => (r.body as { model?: unknown } | undefined)?.model === model).length;

const chat = (topLogprobs: number) =>
  openai.chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    logprobs: true,
    top_logprobs: topLogprobs,
  });
const legacy = (logprobs: number) => openai.completions.create({ model: 'm', prompt: 'hi', logprobs });

describe.each([
  { param: 'top_logprobs', max: 20, ask: chat },
  { param: 'logprobs', max: 5, ask: legacy },
])("an upstream 400 for $param past OpenAI's $max", ({ param, max, ask }) => {
  it("is the caller's 400 naming it, asked of one deployment, with no health penalty", async () => {
    for (let i = 0; i < TRIES; i++) {
      const err = await failure(ask(max + 1));
      expect(err.status).toBe(400);
      expect(err.error).toMatchObject({ type: 'invalid_request_error', code: 400 });
      expect(String(err.error.message)).toContain(`'${param}'`);
      expect(String(err.error.message)).toContain(`<= ${max}`);
    }
    // Not failed over: the second deployment would refuse the same parameter alike.
    expect([callsTo('m-first'), callsTo('m-second')]).toEqual([TRIES, 0]);
    expect(stack.gateway.health.circuitState('first')).toBe('closed');
    // Not cooled down either: the next request is served by the same deployment at once.
    await ask(max);
    expect([callsTo('m-first'), callsTo('m-second')]).toEqual([TRIES + 1, 0]);
  });
});
