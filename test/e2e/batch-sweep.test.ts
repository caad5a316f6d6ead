/**
 * The batch settlement sweep, with two gateway pods sharing real Redis: a batch that finishes
 * upstream and is never read through Gantry is charged once by the sweep, and a client read
 * racing a sweep on the other pod still charges it once. Sweeps run on explicit ticks
 * (`sweepBatches()`); the pods' timers are off.
 */
import { randomUUID } from 'node:crypto';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { testRedisUrl } from '../harness/redis.ts';
import {
  clientOn,
  costMicros,
  MODEL,
  PRICES,
  startResourceStack,
  type ResourceStack,
} from '../harness/resources.ts';
import { usageRecord } from '../harness/usage-record.ts';

const redis = { redisUrl: testRedisUrl(), redisPrefix: `sweep-${randomUUID()}`, batchSweepMs: 0 };
let podA: ResourceStack;
let podB: Gateway;

beforeAll(async () => {
  podA = await startResourceStack('sweep', redis);
  podB = await startGateway({
    configFile: podA.stack.configFile,
    env: { FAKE_PROVIDER_KEY: 'sk-fake' },
    watch: false,
    drainTimeoutMs: 200,
    ...redis,
  });
});
afterAll(async () => {
  await podB?.close();
  await podA?.close();
});

const micros = (usage: { input_tokens: number; output_tokens: number }) =>
  Math.round(
    usage.input_tokens * PRICES.inputPerMillionTokens + usage.output_tokens * PRICES.outputPerMillionTokens,
  );

async function newBatch(text: string): Promise<string> {
  const line = JSON.stringify({
    custom_id: 'one',
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: MODEL, messages: [{ role: 'user', content: text }] },
  });
  const file = await podA.owner.files.create({
    file: await toFile(Buffer.from(line), 'in.jsonl'),
    purpose: 'batch',
  });
  const batch = await podA.owner.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  return batch.id;
}

/** The fake moves a batch one step per read: validating → in_progress → finalizing → completed. */
const STEPS_TO_FINISH = 3;

describe('the batch settlement sweep', () => {
  it('charges a batch finished upstream and never read, exactly once', async () => {
    const spentBefore = await podA.spentMicros();
    const id = await newBatch('Sweep me.');
    const pods = [podA.stack.gateway, podB];
    let charged = 0;
    let costUsd = 0;
    // Sweeps alternate between the pods; each one reads the batch a step further.
    for (let i = 0; i < STEPS_TO_FINISH + 3; i++) {
      const report = await pods[i % 2]!.sweepBatches();
      charged += report.charged;
      costUsd += report.costUsd;
      expect(report.failed).toBe(0);
    }
    expect(charged).toBe(1);
    // Reading it now shows it finished, and charges nothing more.
    const { data, response } = await podA.owner.batches.retrieve(id).withResponse();
    expect(data.status).toBe('completed');
    const expected = micros(data.usage!);
    expect(expected).toBeGreaterThan(0);
    expect(Math.round(costUsd * 1e6)).toBe(expected);
    expect(costMicros(response.headers)).toBe(0);
    expect((await podA.spentMicros()) - spentBefore).toBe(expected);
    const record = await usageRecord(podA.stack, 'acme', `batch-sweep:${id}`);
    expect(record).toMatchObject({ endpoint: 'batches', deployment: 'holder', keyId: 'default/owner' });
    expect(record.promptTokens).toBe(data.usage!.input_tokens);
    // Finished batches left the queue: later sweeps read nothing upstream.
    const calls = podA.upstreamCalls();
    expect(await podB.sweepBatches()).toMatchObject({ checked: 0, charged: 0 });
    expect(podA.upstreamCalls()).toBe(calls);
    // The batch's output file became the owner's on the way.
    expect(await podA.owner.files.retrieve(data.output_file_id!)).toMatchObject({ purpose: 'batch_output' });
  });

  it('charges once when a client read on one pod races a sweep on the other', async () => {
    const spentBefore = await podA.spentMicros();
    const id = await newBatch('Race me.');
    const reader = clientOn(`${podB.url}/v1`, podA.keys.owner);
    // Two reads: finalizing; the next read upstream, whichever pod makes it, completes it.
    for (let i = 0; i < STEPS_TO_FINISH - 1; i++) {
      const { response } = await podA.owner.batches.retrieve(id).withResponse();
      expect(costMicros(response.headers)).toBe(0);
    }
    const [read, sweep] = await Promise.all([
      reader.batches.retrieve(id).withResponse(),
      podA.stack.gateway.sweepBatches(),
    ]);
    const { data } = await podA.owner.batches.retrieve(id).withResponse();
    expect(data.status).toBe('completed');
    const expected = micros(data.usage!);
    const readCharge = costMicros(read.response.headers);
    const sweepCharge = Math.round(sweep.costUsd * 1e6);
    expect(readCharge + sweepCharge).toBe(expected);
    expect([readCharge, sweepCharge].sort((a, b) => a - b)).toEqual([0, expected]);
    expect((await podA.spentMicros()) - spentBefore).toBe(expected);
    // Nothing is left for a later sweep to charge.
    expect((await podB.sweepBatches()).charged).toBe(0);
    expect((await podA.spentMicros()) - spentBefore).toBe(expected);
  });

  it('leaves deployment health alone when it cannot read a batch, and settles it later', async () => {
    const spentBefore = await podA.spentMicros();
    const id = await newBatch('Fail me first.');
    const fake = podA.stack.fakes[0]!;
    const gateway = podA.stack.gateway;
    // More failures than the breaker's threshold (3): through the router, the circuit would open.
    fake.setFaults([{ match: { path: `/batches/${id}` }, fault: { type: 'status', status: 500 } }]);
    for (let i = 0; i < 4; i++) expect(await gateway.sweepBatches()).toMatchObject({ failed: 1, charged: 0 });
    fake.setFaults([]);
    expect(gateway.health.circuitState('holder')).toBe('closed');
    // Still queued: later sweeps read it to the end and charge it.
    let charged = 0;
    for (let i = 0; i < STEPS_TO_FINISH + 1; i++) charged += (await gateway.sweepBatches()).charged;
    expect(charged).toBe(1);
    const batch = await podA.owner.batches.retrieve(id);
    expect((await podA.spentMicros()) - spentBefore).toBe(micros(batch.usage!));
  });
});
