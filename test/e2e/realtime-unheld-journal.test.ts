/**
 * A Realtime response charged without a hold is as durable as any settlement. With Redis down
 * (a real redis-server, stopped), a server-VAD response's hold fails, so it is cancelled, yet
 * its output before the cancel landed is owed: the charge goes to the settlement journal, and
 * once Redis is back the replay charges it; a second gateway replaying the same journal text
 * charges nothing more. Before, the failed charge was only logged ('realtime charge deferred')
 * and lost.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startGateway } from '../../dataplane/src/gateway.ts';
import { pendingSettlements } from '../../dataplane/src/stores/journal/entries.ts';
import { JOURNAL_FILE } from '../../dataplane/src/stores/journal/journal.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { startRealtimeUpstream, type RealtimeUpstream } from '../harness/realtime-upstream.ts';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { apiKey, deployment, tenant } from '../harness/stack.ts';

const PRICING = { inputPerMillionTokens: 4, outputPerMillionTokens: 16 };
const BUDGET = { limitUsd: 100, period: 'monthly' } as const;
const KEY_REF = { tenant: 'acme', keyId: 'default/k' };
/** The VAD response cancelled after its first delta: 1,000 characters, 250 output tokens, no input. */
const COST = (250 * 16) / 1e6;

let redis: RedisInstance;
let vad: RealtimeUpstream;
let dir: string;
let configFile: string;

const boot = (journalDir: string, logs: LogLine[]) =>
  startGateway({
    configFile,
    env: { FAKE_PROVIDER_KEY: 'k' },
    watch: false,
    redisUrl: redis.url,
    redisPrefix: 'rtj',
    journalDir,
    logger: { level: 'info', stream: logSink(logs) },
  });

beforeAll(async () => {
  [redis, vad] = await Promise.all([startRedis(), startRealtimeUpstream({ vad: true })]);
  dir = await mkdtemp(join(tmpdir(), 'gantry-rt-unheld-'));
  configFile = join(dir, 'gantry.yaml');
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
      apiKey('k', 'sk-rt-unheld', 'acme', { budget: BUDGET }),
    ].join(''),
  );
});
afterAll(async () => {
  await Promise.all([vad.close(), redis.stop()]);
  await rm(dir, { recursive: true, force: true });
});

it('journals an unheld Realtime charge while Redis is down, and replays charge it once', async () => {
  const journalDir = join(dir, 'journal');
  const logs: LogLine[] = [];
  const gw = await boot(journalDir, logs);
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/realtime?model=rt`, {
    headers: { authorization: 'Bearer sk-rt-unheld' },
  });
  const seen = new Map<string, () => void>();
  const event = (type: string) => new Promise<void>((resolve) => seen.set(type, resolve));
  ws.on('message', (d) => seen.get((JSON.parse(String(d)) as { type: string }).type)?.());
  let journalText: string;
  try {
    const created = event('session.created');
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    await created;

    await redis.stop();
    // The VAD response's hold fails (503 to the client), it is cancelled after its first delta.
    const done = event('response.done');
    ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    await done;
    // Logged once the entry is on disk.
    const journaled = (l: LogLine) =>
      l.msg === 'budget store unavailable; settlement journaled' && l.operation === 'budget.charge';
    await vi.waitFor(() => expect(logs.some(journaled)).toBe(true), { timeout: 5_000 });
    expect(gw.journal?.pending).toBe(1);
    journalText = await readFile(join(journalDir, JOURNAL_FILE), 'utf8');
    const [entry, ...rest] = pendingSettlements(journalText);
    expect(rest).toEqual([]);
    expect(entry!.amountUsd).toBeCloseTo(COST, 12);
    expect(entry!.reservation).toMatchObject({ ...KEY_REF, amountUsd: 0, limitUsd: BUDGET.limitUsd });

    // Back (empty: persistence is off), Redis takes the journal's replay on reconnect.
    await redis.restart();
    await vi.waitFor(() => expect(gw.journal?.pending).toBe(0), { timeout: 10_000 });
    expect((await gw.stores.budgets.state(KEY_REF, BUDGET)).spentUsd).toBeCloseTo(COST, 12);
  } finally {
    ws.terminate();
    await gw.close();
  }

  // Another gateway replaying the same entry (the journal as it was) charges nothing more.
  const again = join(dir, 'journal-again');
  await mkdir(again);
  await writeFile(join(again, JOURNAL_FILE), journalText);
  const next = await boot(again, []);
  try {
    expect(next.journal?.pending).toBe(0); // replayed before serving
    expect((await next.stores.budgets.state(KEY_REF, BUDGET)).spentUsd).toBeCloseTo(COST, 12);
  } finally {
    await next.close();
  }
});
