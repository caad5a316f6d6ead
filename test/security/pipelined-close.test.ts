/**
 * A client that closes a keep-alive connection with pipelined requests in flight. Node queues
 * the responses of pipelined requests behind the one on the wire, and a queued response never
 * gets a socket, so it never closes: every request the client left must still be aborted,
 * recorded 499 and charged only for what the upstream consumed. Raw sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { until } from '../harness/gateway-spawn.ts';
import { rawChat, RawConnection } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageToday } from '../harness/usage-record.ts';

const KEY = 'sk-pipelined-close';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
      tenant('pipeclose'),
      apiKey('k', KEY, 'pipeclose'),
    ].join(''),
  );
});
afterAll(() => stack?.close());

const chatRequest = (stream = false): string =>
  rawChat(KEY, { model: 'm', stream, messages: [{ role: 'user', content: 'hi' }] });

const records = (): Promise<UsageRecord[]> => usageToday(stack, 'pipeclose', 200);

/** The usage records of `count` pipelined requests whose client leaves once all are upstream. */
const leaving = async (requests: string[]): Promise<UsageRecord[]> => {
  const fake = stack.fakes[0]!;
  fake.setFaults([{ match: { model: 'm' }, fault: { type: 'delay', ms: 2_000 } }]);
  const before = (await records()).length;
  const seen = fake.requests.length;
  const c = new RawConnection(stack.gateway.url).send(requests.join(''));
  await until(() => fake.requests.length >= seen + requests.length);
  c.close();
  await until(async () => (await records()).length >= before + requests.length);
  const all = await records();
  return all.slice(0, all.length - before);
};

describe('a client closing a connection with pipelined requests in flight', () => {
  it('aborts every request it left, the queued ones too: all recorded 499, each charged its prompt only', async () => {
    const left = await leaving([chatRequest(), chatRequest(), chatRequest()]);
    expect(left.map((r) => r.status)).toEqual([499, 499, 499]);
    // All three were upstream when the client left: the provider bills their prompts (the
    // abandoned-call rule), never an answer nobody received.
    for (const r of left) {
      expect(r.promptTokens).toBeGreaterThan(0);
      expect(r.completionTokens).toBe(0);
      expect(r.costUsd).toBeGreaterThan(0);
      expect(r.costUsd).toBe(left[0]!.costUsd);
    }
  });

  it('aborts a queued streamed request as well', async () => {
    const left = await leaving([chatRequest(), chatRequest(true)]);
    expect(left.map((r) => r.status)).toEqual([499, 499]);
  });
});
