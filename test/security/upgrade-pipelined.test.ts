/**
 * An upgrade pipelined behind a request still being served on the same keep-alive connection.
 * Node emits 'upgrade' as soon as it has parsed the upgrade request, whatever is still owed on
 * that socket; the gateway holds it until every earlier answer has gone out, then serves it,
 * so no head (a 101, a refusal, a handed-back answer) is written ahead of them. Raw sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WAITING_BYTES } from '../../dataplane/src/realtime/in-turn.ts';
import { until } from '../harness/gateway-spawn.ts';
import { parseAnswers, rawChat, RawConnection, statusLines } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageToday } from '../harness/usage-record.ts';

const KEY = 'sk-upgrade-pipelined';
const WS_KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
      deployment({ name: 'rt', model: 'gpt-rt', baseUrl: fakeBase(url!), capabilities: ['realtime'] }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack?.close());

const chatRequest = (): string => rawChat(KEY, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });

const realtimeUpgrade = (model: string): string =>
  `GET /v1/realtime?model=${model} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n` +
  `Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${WS_KEY}\r\n\r\n`;

/** The chat answer waits on the fake provider until released, so the upgrade arrives behind it. */
const heldChat = (): void =>
  stack.fakes[0]!.setFaults([{ match: { model: 'm' }, fault: { type: 'delay', ms: 300 } }]);

describe('an upgrade pipelined behind a response still under way', () => {
  it('a refused Realtime upgrade answers after the earlier response, never ahead of it', async () => {
    heldChat();
    const c = new RawConnection(stack.gateway.url).send(chatRequest() + realtimeUpgrade('no-such-model'));
    await c.closed;
    expect(parseAnswers(c.text).map((a) => a.status)).toEqual([200, 404]);
  });

  it('an accepted Realtime upgrade sends its 101 after the earlier response', async () => {
    heldChat();
    const c = new RawConnection(stack.gateway.url).send(chatRequest() + realtimeUpgrade('gpt-rt'));
    await c.receive((t) => t.includes('101 Switching Protocols'));
    const [chat] = parseAnswers(c.text);
    expect(chat?.status).toBe(200);
    expect(c.text.indexOf('HTTP/1.1 101 ')).toBeGreaterThan(c.text.indexOf('HTTP/1.1 200 '));
    expect(statusLines(c.text)).toBe(2);
    c.close();
  });

  it('behind an answer that closes the connection, the upgrade is dropped unanswered', async () => {
    stack.fakes[0]!.setFaults([]);
    // A wrong key's 401 closes its connection: nothing may follow it, a 101 least of all.
    const c = new RawConnection(stack.gateway.url).send(
      chatRequest().replace(KEY, 'sk-wrong') + realtimeUpgrade('gpt-rt'),
    );
    await c.closed;
    expect(parseAnswers(c.text).map((a) => a.status)).toEqual([401]);
    expect(statusLines(c.text)).toBe(1);
    expect(stack.gateway.app.realtime.size).toBe(0);
  });

  it('an upgrade the gateway does not serve, pipelined, is answered after the earlier response', async () => {
    heldChat();
    const c = new RawConnection(stack.gateway.url).send(
      chatRequest() + 'GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n',
    );
    await c.closed;
    const statuses = parseAnswers(c.text).map((a) => a.status);
    expect(statuses[0]).toBe(200);
    expect(statuses).toHaveLength(2);
    // The gateway is still up and serving.
    const [after] = await RawConnection.exchange(
      stack.gateway.url,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(after).toBeDefined();
  });
});

describe('while an upgrade waits its turn', () => {
  const statuses = async (): Promise<number[]> => {
    const logs = await usageToday(stack, 'acme', 200);
    return logs.map((r) => r.status);
  };

  /** Statuses recorded for the requests on a connection the client closes once both chats are upstream. */
  const leaving = async (bytes: string): Promise<number[]> => {
    const fake = stack.fakes[0]!;
    fake.setFaults([{ match: { model: 'm' }, fault: { type: 'delay', ms: 1_500 } }]);
    const before = (await statuses()).length;
    const seen = fake.requests.length;
    const c = new RawConnection(stack.gateway.url).send(bytes);
    await until(() => fake.requests.length >= seen + 2);
    c.close();
    await until(async () => (await statuses()).length >= before + 2);
    const all = await statuses();
    return all.slice(0, all.length - before).sort();
  };

  it('a client that leaves is seen as when no upgrade waits: the requests it left are aborted', async () => {
    const plain = await leaving(chatRequest() + chatRequest());
    const upgrading = await leaving(chatRequest() + chatRequest() + realtimeUpgrade('gpt-rt'));
    // Both chats were left: the one on the wire and the one queued behind it (queued-close).
    expect(plain).toEqual([499, 499]);
    expect(upgrading).toEqual(plain);
  });

  it('what the client sends meanwhile reaches the session once it opens', async () => {
    heldChat();
    const seen = stack.fakes[0]!.requests.length;
    const c = new RawConnection(stack.gateway.url).send(chatRequest() + realtimeUpgrade('gpt-rt'));
    await until(() => stack.fakes[0]!.requests.length > seen);
    // A masked WebSocket close frame (1000), sent before the 101: the session must read it and close.
    const mask = Buffer.from([1, 2, 3, 4]);
    const code = Buffer.from([0x03, 0xe8]).map((b, i) => b ^ mask[i]!);
    c.send(Buffer.concat([Buffer.from([0x88, 0x82]), mask, code]));
    await c.closed;
    expect(c.text).toContain('HTTP/1.1 101 ');
    // The server's own close frame answers it (opcode 0x88) after the 101's head.
    expect(c.text.slice(c.text.indexOf('\r\n\r\n', c.text.indexOf(' 101 ')) + 4)).toContain('\x88');
  });

  it('a client that sends more than it may keep meanwhile is disconnected', async () => {
    const fake = stack.fakes[0]!;
    fake.setFaults([{ match: { model: 'm' }, fault: { type: 'delay', ms: 2_000 } }]);
    const seen = fake.requests.length;
    const c = new RawConnection(stack.gateway.url).send(chatRequest() + realtimeUpgrade('gpt-rt'));
    await until(() => fake.requests.length > seen);
    c.send('x'.repeat(MAX_WAITING_BYTES + 1));
    await c.closed;
    expect(statusLines(c.text)).toBe(0);
  });
});

describe('an upgrade that comes due after shutdown began', () => {
  it('is refused with the closing 503 (connection: close), never opened as a session', async () => {
    const closing = await startStack(
      ([url]) =>
        [
          deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
          deployment({ name: 'rt', model: 'gpt-rt', baseUrl: fakeBase(url!), capabilities: ['realtime'] }),
          tenant('acme'),
          apiKey('k', KEY, 'acme'),
        ].join(''),
      { drainTimeoutMs: 5_000 },
    );
    const fake = closing.fakes[0]!;
    fake.setFaults([{ match: { model: 'm' }, fault: { type: 'delay', ms: 600 } }]);
    const c = new RawConnection(closing.gateway.url).send(chatRequest() + realtimeUpgrade('gpt-rt'));
    // The chat is upstream, the upgrade waits behind it: now the gateway starts closing.
    await until(() => fake.requests.length > 0);
    await closing.close();
    await c.closed;
    const answers = parseAnswers(c.text);
    expect(answers.map((a) => a.status)).toEqual([200, 503]);
    expect(answers[1]?.headers.connection).toBe('close');
    expect(JSON.parse(answers[1]!.body)).toMatchObject({
      error: { type: 'service_unavailable', message: expect.stringContaining('shutting down') },
    });
    expect(c.text).not.toContain(' 101 ');
    expect(closing.gateway.app.realtime.size).toBe(0);
  });
});
