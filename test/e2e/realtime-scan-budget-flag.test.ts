/**
 * `--realtime-max-scanned-chars-per-minute` reaches the Realtime server of a real gateway
 * process (main.ts under tsx): with 1000, a key's 1001st character of checked text in the
 * minute is refused unscanned, the way the default 16 MiB would refuse its 16 Mi + 1st.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { spawnGateway, type GatewayProcess } from '../harness/gateway-spawn.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';

const KEY = 'sk-test-scan-flag';

let fake: FakeProvider;
let gw: GatewayProcess;

beforeAll(async () => {
  fake = await startFakeProvider({ port: 0 });
  gw = await spawnGateway(
    [
      deployment({
        name: 'rt',
        model: 'gpt-rt',
        baseUrl: fakeBase(fake.url),
        capabilities: ['realtime', 'chat'],
      }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
    ['--realtime-max-scanned-chars-per-minute', '1000'],
  );
});
afterAll(async () => {
  await gw?.kill();
  await fake?.close();
});

interface Event {
  type: string;
  error?: { type: string; code: number; message: string; event_id: string | null };
}

describe('the Realtime scan budget flag', () => {
  it('bounds what one key may have scanned per minute', async () => {
    const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-rt`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const events: Event[] = [];
    let wake: () => void = () => undefined;
    ws.on('message', (data) => {
      events.push(JSON.parse(String(data)) as Event);
      wake();
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const next = async (...types: string[]): Promise<Event> => {
      for (;;) {
        const at = events.findIndex((e) => types.includes(e.type));
        if (at !== -1) return events.splice(at, 1)[0]!;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    const say = (chars: number, id: string) => {
      ws.send(
        JSON.stringify({
          type: 'conversation.item.create',
          event_id: id,
          item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a'.repeat(chars) }] },
        }),
      );
      return next('conversation.item.done', 'error');
    };
    try {
      await next('session.created');
      expect((await say(999, 'a')).type).toBe('conversation.item.done');
      const refused = await say(2, 'b');
      expect(refused.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429, event_id: 'b' });
      expect(refused.error?.message).toMatch(/^the share of this session is 1000 characters/);
    } finally {
      ws.terminate();
    }
  });
});
