/**
 * Owned objects with Redis: two gateway pods share the ownership records, so an object made
 * through one is reachable through the other (for its owner only), and a finished batch read
 * through both pods is charged once.
 */
import { randomUUID } from 'node:crypto';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { MAX_ESTIMATE_USD } from '../../dataplane/src/accounting/estimate.ts';
import {
  clientOn,
  costMicros,
  failure,
  MODEL,
  PRICES,
  startResourceStack,
  status,
  type ResourceStack,
} from '../harness/resources.ts';

const redis = { redisUrl: testRedisUrl(), redisPrefix: `owned-${randomUUID()}` };
let podA: ResourceStack;
let podB: Gateway;

beforeAll(async () => {
  podA = await startResourceStack('redis', redis);
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

describe('owned objects across pods', () => {
  it('are shared by the pods, private to their key, and a batch is charged once', async () => {
    const a = podA.owner;
    const b = clientOn(`${podB.url}/v1`, podA.keys.owner);
    const siblingOnB = clientOn(`${podB.url}/v1`, podA.keys.sibling);
    const line = JSON.stringify({
      custom_id: 'only',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: MODEL, messages: [{ role: 'user', content: 'Across pods?' }] },
    });
    const file = await a.files.create({
      file: await toFile(Buffer.from(line), 'in.jsonl'),
      purpose: 'batch',
    });
    expect((await b.files.retrieve(file.id)).id).toBe(file.id);
    expect((await b.files.list()).data.map((f) => f.id)).toContain(file.id);
    expect(await status(siblingOnB.files.retrieve(file.id))).toBe(404);

    const batch = await b.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    let charged = 0;
    let usage: { input_tokens: number; output_tokens: number } | undefined;
    // Read alternately through both pods until it is done, then once more through each.
    for (let i = 0; i < 8; i++) {
      const { data, response } = await (i % 2 === 0 ? a : b).batches.retrieve(batch.id).withResponse();
      charged += costMicros(response.headers);
      if (data.status === 'completed') usage = data.usage;
    }
    expect(usage).toBeDefined();
    const expected = Math.round(
      usage!.input_tokens * PRICES.inputPerMillionTokens +
        usage!.output_tokens * PRICES.outputPerMillionTokens,
    );
    expect(charged).toBe(expected);
    expect(await podA.spentMicros()).toBe(expected);
    expect(await status(siblingOnB.batches.retrieve(batch.id))).toBe(404);
  });

  it("count a batch's worst case on every pod until it settles, and store no estimate as null", async () => {
    const b = clientOn(`${podB.url}/v1`, podA.keys.owner);
    const line = (id: string, extra: Record<string, unknown>) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra },
      });
    const upload = async (text: string) =>
      podA.owner.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
    const create = (client: typeof b, id: string) =>
      client.batches.create({
        input_file_id: id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });

    // Infinity through JSON would be null: no hold at all. Clamped, it is refused.
    const unbounded = await upload(line('u', { max_tokens: 1e300, n: 1e300 }));
    const record = await podA.stack.gateway.stores.ownership.get('acme', 'file', unbounded.id);
    expect(record?.estimateUsd).toBe(MAX_ESTIMATE_USD);
    expect(await status(create(b, unbounded.id))).toBe(402);

    // About $80 of the $100 budget each: one fits, a second on the other pod does not.
    const file = await upload(
      Array.from({ length: 10 }, (_, i) => line(`c${i}`, { max_tokens: 4000 })).join('\n'),
    );
    await create(podA.owner, file.id);
    const refused = await failure(create(b, file.id));
    expect(refused.status).toBe(402);
    expect(String(refused.error.message)).toContain("this key's 1 unsettled batch");
  });
});
