/**
 * Shutdown against a store that hangs (answers neither yes nor no): the waits for unacknowledged
 * settlements and for the usage recorder's last flush are capped by `storeWaitMs`, the close
 * completes, and the log says what stayed unfinished. The hang is a controlled promise the test
 * resolves only after the close; a real gateway, the fake provider over loopback.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { JOURNAL_WRITE_WAIT_MS } from '../../dataplane/src/shutdown-wait.ts';
import { StoreUnavailableError } from '../../dataplane/src/stores/errors.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const KEY = 'sk-test-store-wait';

let fake: FakeProvider;
let dir: string;
let configFile: string;
let logs: LogLine[];
let gateway: Gateway | undefined;
/** Releases the hung store calls, so nothing outlives the test. */
let release: () => void = () => undefined;

beforeAll(async () => {
  fake = await startFakeProvider({ port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'gantry-store-wait-'));
  configFile = join(dir, 'gantry.yaml');
  await writeFile(
    configFile,
    [
      deployment({ name: 'gpt', model: 'gpt-4o-mini', baseUrl: fakeBase(fake.url) }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterEach(async () => {
  release();
  await gateway?.close();
  gateway = undefined;
});
afterAll(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

async function boot(): Promise<Gateway> {
  logs = [];
  gateway = await startGateway({
    configFile,
    env: { FAKE_PROVIDER_KEY: 'k' },
    watch: false,
    storeWaitMs: 50,
    logger: { level: 'info', stream: logSink(logs) },
  });
  return gateway;
}

/**
 * The usage store's record calls: the first `failing` fail as unreachable (so the record goes
 * to the retrying recorder), every later one hangs until `release`.
 */
function hangUsageStore(gw: Gateway, failing: number): { calls: () => number } {
  let calls = 0;
  const hung = new Promise<boolean>((resolve) => (release = () => resolve(true)));
  gw.stores.usage.record = (_r: UsageRecord) => {
    calls++;
    return calls <= failing ? Promise.reject(new StoreUnavailableError('usage.record', 'down')) : hung;
  };
  return { calls: () => calls };
}

async function chat(gw: Gateway): Promise<void> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

const logged = (msg: string) => logs.find((l) => l.msg.startsWith(msg));

describe('shutdown with a hung store', () => {
  it('stops waiting for unacknowledged settlements after storeWaitMs and logs how many', async () => {
    const gw = await boot();
    const store = hangUsageStore(gw, 0);
    await chat(gw);
    await until('the record sent to the hung store', async () => (store.calls() === 1 ? true : undefined));

    await gw.close();
    expect(logged('exiting with settlements the stores have not acknowledged')).toMatchObject({
      level: 50,
      settlements: 1,
      // After the stores close, the last wait is for journal writes (local disk): its own cap.
      waitedMs: JOURNAL_WRITE_WAIT_MS,
    });
    // The request's price, owed by the settlement that never landed.
    expect(logged('exiting with settlements the stores have not acknowledged')?.owedUsd).toBeGreaterThan(0);
    expect(logged('exiting with usage records not written')).toBeUndefined();
  });

  it('stops waiting for the usage recorder last flush after storeWaitMs and logs the records left', async () => {
    const gw = await boot();
    const store = hangUsageStore(gw, 1);
    await chat(gw);
    // First call failed (unreachable), the recorder's own write is the second: it hangs.
    await until('the recorder write to the hung store', async () => (store.calls() === 2 ? true : undefined));

    await gw.close();
    expect(logged('exiting with settlements the stores have not acknowledged')).toBeUndefined();
    expect(logged('exiting with usage records not written')).toMatchObject({
      level: 50,
      records: 1,
      storeWaitMs: 50,
    });
  });
});
