/**
 * One connection pipelining many requests. Node runs the handler of every pipelined request as
 * it parses it, so without a bound one connection could start any number of upstream calls at
 * once. Past --max-pipelined-requests unanswered on its socket, a request is answered 429
 * without work, in order with the others; answers already owed are all written. Raw sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../harness/gateway-spawn.ts';
import { parseAnswers, rawChat, RawConnection } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-pipeline-bound';
const BOUND = 4;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
        tenant('pb'),
        apiKey('k', KEY, 'pb'),
      ].join(''),
    { limits: { maxPipelinedRequests: BOUND } },
  );
});
afterAll(() => stack?.close());

const chat = (i: number): string =>
  rawChat(KEY, { model: 'm', messages: [{ role: 'user', content: `question ${i}` }] });

describe('a connection pipelining past the bound', () => {
  it('starts at most the bound upstream; the rest get a 429 naming the limit, every answer in order', async () => {
    const fake = stack.fakes[0]!;
    fake.setFaults([{ fault: { type: 'delay', ms: 300 } }]);
    const seen = fake.requests.length;
    const c = new RawConnection(stack.gateway.url).send(
      Array.from({ length: 10 }, (_, i) => chat(i)).join(''),
    );
    await until(() => parseAnswers(c.text).length === 10);
    const answers = parseAnswers(c.text);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
    expect(fake.requests.length - seen).toBe(BOUND);
    // Each 200 answers its own question, in the order asked.
    answers.slice(0, BOUND).forEach((a, i) => expect(a.body).toContain(`question ${i}`));
    expect(JSON.parse(answers[4]!.body).error).toMatchObject({ type: 'rate_limit_exceeded', code: 429 });
    expect(answers[4]!.body).toMatch(/pipelined unanswered on this connection/);
    // Once answered, the connection takes requests again.
    c.send(chat(10));
    await until(() => parseAnswers(c.text).length === 11);
    expect(parseAnswers(c.text)[10]!.status).toBe(200);
    c.close();
  });
});
