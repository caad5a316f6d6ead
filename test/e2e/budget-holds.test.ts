/**
 * A started fine-tuning job or batch is charged when it finishes, hours later; until then its
 * worst case is held against its key's budget for every endpoint, not only for later creates of
 * its kind: a $1 key that starts a ~$0.98 job cannot then spend its dollar on chat. The hold
 * goes when the work settles: replaced by the real cost, or released when it is cancelled, once
 * however many reads (and sweeps) race to settle it. In process and with real Redis.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJobId } from '../../dataplane/src/pipeline/fine-tuning/jobs.ts';
import { StoreUnavailableError } from '../../dataplane/src/stores/errors.ts';
import { formatUsd } from '../../dataplane/src/stores/money.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { costMicros, failure } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const MODEL = 'held-model';
/** $0.01 an output token: a chat of max_tokens 5 is held at about $0.05. */
const PRICES = { inputPerMillionTokens: 1, outputPerMillionTokens: 10_000, trainingPerMillionTokens: 25_000 };
const BUDGET = { limitUsd: 1, period: 'monthly' as const };
const KEYS = [
  'ft-chat',
  'ft-cancel',
  'ft-race',
  'batch-chat',
  'batch-race',
  'outage',
  'outage-batch',
  'sweep-cancel',
] as const;
type KeyName = (typeof KEYS)[number];

/** Key names differ per backend: the fake's jobs are one map per process, listed by owner. */
const backends = [
  { name: 'in-process', tag: 'mem', opts: {} },
  { name: 'redis', tag: 'redis', opts: { redisUrl: testRedisUrl(), redisPrefix: `holds-${randomUUID()}` } },
];

describe.each(backends)('work held against the whole budget ($name)', ({ tag, opts }) => {
  let stack: Stack;
  const clients = {} as Record<KeyName, OpenAI>;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'tuner',
            model: MODEL,
            baseUrl: fakeBase(url!),
            capabilities: ['chat', 'fine_tuning', 'files', 'batches'],
            pricing: PRICES,
          }),
          tenant('acme'),
          ...KEYS.map((k) => apiKey(`${k}-${tag}`, `sk-holds-${k}-${tag}`, 'acme', { budget: BUDGET })),
        ].join(''),
      { ...opts, batchSweepMs: 0 },
    );
    for (const k of KEYS)
      clients[k] = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-holds-${k}-${tag}`, maxRetries: 0 });
  });
  afterAll(() => stack.close());

  const state = (k: KeyName) =>
    stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: `default/${k}-${tag}` }, BUDGET);

  const chat = (k: KeyName) =>
    clients[k].chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5,
    });

  /** Refused for the budget, with the budget's 402, which says what the key's started work holds. */
  async function expectRefused(k: KeyName): Promise<void> {
    // What the key holds with no request in flight, read by the store's state (not heldForWork,
    // which the message is made from): all of it is started work's.
    const held = (await state(k)).heldUsd;
    expect(held).toBeGreaterThan(0.9);
    const refused = await failure(chat(k));
    expect(refused.status).toBe(402);
    expect(refused.error).toMatchObject({ type: 'budget_exceeded' });
    expect(String(refused.error.message)).toContain(
      `(${formatUsd(held)} of it is held for this key's unsettled batches and fine-tuning jobs until they settle)`,
    );
  }

  /** A job of 3 epochs over one short line: about 13 tokens a pass, held at ~$0.98 of the $1. */
  async function startJob(k: KeyName) {
    const client = clients[k];
    const file = await client.files.create({
      file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    const job = await client.fineTuning.jobs.create({
      model: MODEL,
      training_file: file.id,
      hyperparameters: { n_epochs: 3 },
    });
    const held = (await state(k)).heldUsd;
    // Less than a chat's hold is left beside it.
    expect(held).toBeGreaterThan(BUDGET.limitUsd - 0.05);
    expect(held).toBeLessThanOrEqual(BUDGET.limitUsd);
    return job;
  }

  /** Moves work a step on the fake itself (one step per read), unseen by the gateway. */
  async function advanceUpstream(path: string, steps: number): Promise<Record<string, unknown>> {
    let body: Record<string, unknown> = {};
    for (let i = 0; i < steps; i++) {
      const res = await fetch(`${stack.fakes[0]!.url}/v1/${path}`, {
        headers: { authorization: 'Bearer sk-fake' },
      });
      expect(res.status).toBe(200);
      body = (await res.json()) as Record<string, unknown>;
    }
    return body;
  }

  it('refuses chat (402) once spend plus a running job would pass the budget, and frees the budget to its real cost', async () => {
    const job = await startJob('ft-chat');
    await expectRefused('ft-chat');
    // Two reads take the fake's job to succeeded: its training replaces its hold.
    await clients['ft-chat'].fineTuning.jobs.retrieve(job.id);
    const done = await clients['ft-chat'].fineTuning.jobs.retrieve(job.id);
    expect(done.status).toBe('succeeded');
    const costUsd = done.trained_tokens! * (PRICES.trainingPerMillionTokens / 1e6);
    const after = await state('ft-chat');
    expect(after.heldUsd).toBe(0);
    expect(after.spentUsd).toBeCloseTo(costUsd, 6);
    expect(after.remainingUsd).toBeCloseTo(BUDGET.limitUsd - costUsd, 6);
    // What is left (B − C) is the key's to spend again.
    expect((await chat('ft-chat')).choices).toHaveLength(1);
  });

  it('releases a job\u2019s hold when it is cancelled, charging nothing', async () => {
    const job = await startJob('ft-cancel');
    await expectRefused('ft-cancel');
    expect((await clients['ft-cancel'].fineTuning.jobs.cancel(job.id)).status).toBe('cancelled');
    expect(await state('ft-cancel')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect((await chat('ft-cancel')).choices).toHaveLength(1);
  });

  it('charges a job once when reads race to see it finished', async () => {
    const job = await startJob('ft-race');
    const ref = parseJobId(job.id)!;
    const upstream = await advanceUpstream(`fine_tuning/jobs/${ref.upstreamId}`, 2);
    expect(upstream.status).toBe('succeeded');
    const costMicrosDue = Math.round(Number(upstream.trained_tokens) * PRICES.trainingPerMillionTokens);
    const client = clients['ft-race'];
    const answers = await Promise.all([
      client.fineTuning.jobs.retrieve(job.id).withResponse(),
      client.fineTuning.jobs.retrieve(job.id).withResponse(),
      client.fineTuning.jobs.list().withResponse(),
    ]);
    // One answer carries the charge; the budget took it once and holds nothing more.
    expect(answers.map((a) => costMicros(a.response.headers)).reduce((a, b) => a + b, 0)).toBe(costMicrosDue);
    const after = await state('ft-race');
    expect(after.heldUsd).toBe(0);
    expect(Math.round(after.spentUsd * 1e6)).toBe(costMicrosDue);
  });

  /** A batch of one request of up to 97 output tokens: held at a little over $0.97. */
  async function startBatch(k: KeyName) {
    const client = clients[k];
    const lines = [
      JSON.stringify({
        custom_id: 'r',
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 97 },
      }),
    ];
    const file = await client.files.create({
      file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const held = (await state(k)).heldUsd;
    expect(held).toBeGreaterThan(BUDGET.limitUsd - 0.05);
    expect(held).toBeLessThan(BUDGET.limitUsd);
    return batch;
  }

  it("holds a batch's worst case against chat until the batch is cancelled", async () => {
    const batch = await startBatch('batch-chat');
    await expectRefused('batch-chat');
    await clients['batch-chat'].batches.cancel(batch.id);
    // The read that sees it cancelled (no usage) settles it at nothing.
    expect((await clients['batch-chat'].batches.retrieve(batch.id)).status).toBe('cancelled');
    expect(await state('batch-chat')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect((await chat('batch-chat')).choices).toHaveLength(1);
  });

  it('charges a finished batch once when a read and the sweep race, and its hold goes with the charge', async () => {
    const batch = await startBatch('batch-race');
    await expectRefused('batch-race');
    const upstream = await advanceUpstream(`batches/${batch.id}`, 3);
    expect(upstream.status).toBe('completed');
    const usage = upstream.usage as { input_tokens: number; output_tokens: number };
    const costMicrosDue = Math.round(
      usage.input_tokens * PRICES.inputPerMillionTokens + usage.output_tokens * PRICES.outputPerMillionTokens,
    );
    expect(costMicrosDue).toBeGreaterThan(0);
    const [read, sweep] = await Promise.all([
      clients['batch-race'].batches.retrieve(batch.id).withResponse(),
      stack.gateway.sweepBatches(),
    ]);
    // Whichever won, the charge was reported by one of them and taken by the budget once.
    expect(costMicros(read.response.headers) + Math.round(sweep.costUsd * 1e6)).toBe(costMicrosDue);
    const after = await state('batch-race');
    expect(after.heldUsd).toBe(0);
    expect(Math.round(after.spentUsd * 1e6)).toBe(costMicrosDue);
    // A later sweep or read changes nothing.
    await stack.gateway.sweepBatches();
    await clients['batch-race'].batches.retrieve(batch.id);
    expect(Math.round((await state('batch-race')).spentUsd * 1e6)).toBe(costMicrosDue);
    expect((await chat('batch-race')).choices).toHaveLength(1);
  });

  it('releases the hold of a batch the sweep finds cancelled, when nobody reads it', async () => {
    const batch = await startBatch('sweep-cancel');
    await clients['sweep-cancel'].batches.cancel(batch.id);
    await expectRefused('sweep-cancel');
    expect((await advanceUpstream(`batches/${batch.id}`, 1)).status).toBe('cancelled');
    await stack.gateway.sweepBatches();
    expect(await state('sweep-cancel')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect((await chat('sweep-cancel')).choices).toHaveLength(1);
  });

  it('answers a read 503 naming the budget store when finished work cannot be charged, for jobs and batches alike, and charges it on the next read', async () => {
    const client = clients.outage;
    const job = await startJob('outage');
    await advanceUpstream(`fine_tuning/jobs/${parseJobId(job.id)!.upstreamId}`, 2);
    const budgets = stack.gateway.stores.budgets;
    const charge = budgets.charge.bind(budgets);
    // The real store, with one fault injected: charges cannot reach it.
    budgets.charge = () => Promise.reject(new StoreUnavailableError('budget.charge'));
    let jobRead, batchRead;
    try {
      jobRead = await failure(client.fineTuning.jobs.retrieve(job.id));
    } finally {
      budgets.charge = charge;
    }
    expect(jobRead.status).toBe(503);
    expect(jobRead.error).toMatchObject({ type: 'service_unavailable' });
    expect(String(jobRead.error.message)).toContain('budget store is unavailable');
    expect(String(jobRead.error.message)).toContain('fine-tuning job');
    const done = await client.fineTuning.jobs.retrieve(job.id);
    const spent = (await state('outage')).spentUsd;
    expect(spent).toBeCloseTo(done.trained_tokens! * (PRICES.trainingPerMillionTokens / 1e6), 6);

    // The same for a batch, settled at nothing (cancelled): its hold stays until the store takes the release.
    const batch = await startBatch('outage-batch');
    const batches = clients['outage-batch'].batches;
    await batches.cancel(batch.id);
    budgets.charge = () => Promise.reject(new StoreUnavailableError('budget.charge'));
    try {
      batchRead = await failure(batches.retrieve(batch.id));
    } finally {
      budgets.charge = charge;
    }
    expect(batchRead.status).toBe(503);
    expect(batchRead.error).toMatchObject({ type: 'service_unavailable' });
    expect(String(batchRead.error.message)).toContain('budget store is unavailable');
    expect(String(batchRead.error.message)).toContain('batch');
    expect((await state('outage-batch')).heldUsd).toBeGreaterThan(0);
    expect((await batches.retrieve(batch.id)).status).toBe('cancelled');
    expect(await state('outage-batch')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
  });
});
