/**
 * What the shutdown logs as owed when its wait for settlements gives up counts a Realtime
 * session's responses still queued for settling, not $0. A server-started (VAD) response's hold
 * is still being made when the session ends (the budget store answers nothing); its settlement
 * waits behind that hold, so the session, tracked at $0 until it has settled everything, was
 * logged as owing nothing. A real Gantry on loopback in front of an upstream that runs
 * server-VAD turns; the hung store is a controlled promise released after the close.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { StoreUnavailableError } from '../../dataplane/src/stores/errors.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { startRealtimeUpstream, type RealtimeUpstream } from '../harness/realtime-upstream.ts';
import { apiKey, deployment, tenant } from '../harness/stack.ts';

const PRICING = { inputPerMillionTokens: 4, outputPerMillionTokens: 16 };
const BUDGET = { limitUsd: 100, period: 'monthly' } as const;
let vad: RealtimeUpstream;
let dir: string;
let gw: Gateway;
const logs: LogLine[] = [];

beforeAll(async () => {
  vad = await startRealtimeUpstream({ vad: true });
  dir = await mkdtemp(join(tmpdir(), 'gantry-rt-owed-'));
  const configFile = join(dir, 'gantry.yaml');
  await writeFile(
    configFile,
    [
      deployment({
        name: 'rt',
        model: 'rt',
        baseUrl: vad.baseUrl,
        capabilities: ['realtime'],
        pricing: PRICING,
      }),
      tenant('acme'),
      apiKey('k', 'sk-rt-owed', 'acme', { budget: BUDGET }),
    ].join(''),
  );
  gw = await startGateway({
    configFile,
    env: { FAKE_PROVIDER_KEY: 'k' },
    watch: false,
    storeWaitMs: 50,
    logger: { level: 'info', stream: logSink(logs) },
  });
});
afterAll(async () => {
  await vad.close();
  await rm(dir, { recursive: true, force: true });
});

it('counts a Realtime response queued behind its hold among what the shutdown logs as owed', async () => {
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/realtime?model=rt`, {
    headers: { authorization: 'Bearer sk-rt-owed' },
  });
  const seen = new Map<string, () => void>();
  const event = (type: string) => new Promise<void>((resolve) => seen.set(type, resolve));
  ws.on('message', (d) => seen.get((JSON.parse(String(d)) as { type: string }).type)?.());
  const created = event('session.created');
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  await created;
  // From here the budget store answers nothing: the VAD response's hold hangs.
  let release!: () => void;
  const hung = new Promise<never>((_, reject) => {
    release = () => reject(new StoreUnavailableError('budget.reserve', 'released'));
  });
  gw.stores.budgets.reserve = () => hung;
  const delta = event('response.function_call_arguments.delta');
  ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
  await delta;
  try {
    // The session ends as the drain closes it (the client answers the 1001); its settlement waits.
    await gw.close();
    const owed = logs.find((l) =>
      l.msg.startsWith('exiting with settlements the stores have not acknowledged'),
    );
    expect(owed).toMatchObject({ settlements: 1 });
    // The one delta relayed: 1,000 characters, 250 output tokens at $16/M (no input yet).
    expect(owed?.owedUsd).toBeCloseTo((250 * 16) / 1e6, 12);
  } finally {
    release();
    ws.terminate();
  }
});
