/**
 * An owned object the upstream answers 404 for is not found *now*, not gone: the caller gets the
 * 404 and its record stays, until 404s spread over a day (three, counted at most once per 12 h,
 * with no success between) make it gone for good. Then its record goes, and held work's hold is
 * released once, at $0. Over real HTTP with the official client and the fake provider, in
 * process and with real Redis; the day passes on the gateway's clock, which the test moves.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseJobId } from '../../dataplane/src/pipeline/fine-tuning/jobs.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { costMicros, failure } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageToday } from '../harness/usage-record.ts';

const MODEL = 'gone-model';
/** $0.01 an output token, $0.025 a trained token. */
const PRICES = { inputPerMillionTokens: 1, outputPerMillionTokens: 10_000, trainingPerMillionTokens: 25_000 };
const BUDGET = { limitUsd: 5, period: 'monthly' as const };
const HOUR = 3_600_000;
const PLATFORM_KEY = 'sk-gone-platform-admin-0123456789abcdef0123';
const KEYS = [
  'file-glitch',
  'file-burst',
  'file-found',
  'file-gone',
  'batch-sweep',
  'batch-read',
  'batch-burst',
  'job-sweep',
  'job-read',
  'admin-batch',
  'admin-job',
] as const;
type KeyName = (typeof KEYS)[number];

const backends = [
  { name: 'in-process', tag: 'mem', opts: {} },
  { name: 'redis', tag: 'redis', opts: { redisUrl: testRedisUrl(), redisPrefix: `gone-${randomUUID()}` } },
];

describe.each(backends)('upstream 404s on owned objects ($name)', ({ tag, opts }) => {
  let stack: Stack;
  let clock = Date.now();
  const clients = {} as Record<KeyName, OpenAI>;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'holder',
            model: MODEL,
            baseUrl: fakeBase(url!),
            capabilities: ['chat', 'files', 'batches', 'fine_tuning'],
            pricing: PRICES,
          }),
          tenant('acme'),
          apiKey(`tenant-admin-${tag}`, `sk-gone-tenant-admin-${tag}`, 'acme', { role: 'admin' }),
          ...KEYS.map((k) => apiKey(`${k}-${tag}`, `sk-gone-${k}-${tag}`, 'acme', { budget: BUDGET })),
          apiKey(`no-budget-${tag}`, `sk-gone-no-budget-${tag}`, 'acme'),
        ].join(''),
      {
        ...opts,
        batchSweepMs: 0,
        clock: () => clock,
        env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_ADMIN_KEY: PLATFORM_KEY },
      },
    );
    for (const k of KEYS)
      clients[k] = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-gone-${k}-${tag}`, maxRetries: 0 });
  });
  afterAll(() => stack.close());
  // Each test's day starts now: the stores keep real time, and work whose hold would have lapsed
  // by a clock days ahead (three days for a batch) is let go by the sweep on that ground alone.
  beforeEach(() => {
    clock = Date.now();
  });

  const keyId = (k: KeyName) => `default/${k}-${tag}`;
  const state = (k: KeyName) =>
    stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: keyId(k) }, BUDGET);
  const record = (family: 'file' | 'batch' | 'fine_tuning_job', id: string) =>
    stack.gateway.stores.ownership.get('acme', family, id);
  const fake = () => stack.fakes[0]!;
  /** Every upstream request for `path` answers 404 from now on. */
  const vanish = (path: string) =>
    fake().setFaults([{ match: { path }, fault: { type: 'status', status: 404 } }]);
  const reappear = () => fake().setFaults([]);
  const upstreamCalls = () => fake().requests.length;

  /** The key's usage records that charged anything (none, when a hold is released). */
  const charged = async (k: KeyName) =>
    (await usageToday(stack, 'acme')).filter((r) => r.keyId === keyId(k) && r.costUsd > 0);

  async function upload(k: KeyName, purpose: 'assistants' | 'batch' | 'fine-tune', line = 'hello') {
    return clients[k].files.create({ file: await toFile(Buffer.from(line), 'f.jsonl'), purpose });
  }

  /** A 404 answered to the caller as SPEC shapes it, naming the object. */
  async function expect404(p: Promise<unknown>, id: string) {
    const { status, error } = await failure(p);
    expect(status).toBe(404);
    expect(String(error.message)).toContain(id);
    expect(typeof error.type).toBe('string');
    expect(error.code).toBe(404);
  }

  it('keeps a file after one transient 404: the next read finds it', async () => {
    const file = await upload('file-glitch', 'assistants');
    fake().setFaults([
      { times: 1, match: { path: `/files/${file.id}` }, fault: { type: 'status', status: 404 } },
    ]);
    await expect404(clients['file-glitch'].files.retrieve(file.id), file.id);
    expect(await record('file', file.id)).toMatchObject({ id: file.id, count404: 1 });
    reappear();
    expect((await clients['file-glitch'].files.retrieve(file.id)).id).toBe(file.id);
    // Found again: the mark is cleared.
    expect((await record('file', file.id))?.count404).toBeUndefined();
  });

  it('keeps a file the upstream answers 404 for again and again within minutes: a burst counts once', async () => {
    const file = await upload('file-burst', 'assistants');
    vanish(`/files/${file.id}`);
    const first = clock;
    for (let i = 0; i < 5; i++) await expect404(clients['file-burst'].files.retrieve(file.id), file.id);
    for (let i = 0; i < 10; i++) {
      clock += 60_000;
      await expect404(clients['file-burst'].files.retrieve(file.id), file.id);
    }
    expect(await record('file', file.id)).toMatchObject({ first404At: first, count404: 1 });
    reappear();
    expect((await clients['file-burst'].files.retrieve(file.id)).id).toBe(file.id);
  });

  it('starts again after a success between 404s', async () => {
    const file = await upload('file-found', 'assistants');
    vanish(`/files/${file.id}`);
    await expect404(clients['file-found'].files.retrieve(file.id), file.id);
    clock += 12 * HOUR;
    await expect404(clients['file-found'].files.retrieve(file.id), file.id);
    expect((await record('file', file.id))?.count404).toBe(2);
    clock += 6 * HOUR;
    reappear();
    await clients['file-found'].files.retrieve(file.id);
    vanish(`/files/${file.id}`);
    clock += 6 * HOUR;
    // A day after the first 404, but the first since it was found: one mark, kept.
    await expect404(clients['file-found'].files.retrieve(file.id), file.id);
    expect(await record('file', file.id)).toMatchObject({ first404At: clock, count404: 1 });
    reappear();
  });

  it('drops a file after 404s spread over a day, and not a moment before', async () => {
    const file = await upload('file-gone', 'assistants');
    vanish(`/files/${file.id}`);
    await expect404(clients['file-gone'].files.retrieve(file.id), file.id);
    clock += 12 * HOUR;
    await expect404(clients['file-gone'].files.retrieve(file.id), file.id);
    clock += 12 * HOUR - 1;
    await expect404(clients['file-gone'].files.retrieve(file.id), file.id);
    expect(await record('file', file.id)).toMatchObject({ count404: 2 });
    clock += 1;
    await expect404(clients['file-gone'].files.retrieve(file.id), file.id);
    expect(await record('file', file.id)).toBeUndefined();
    // Gone: an unknown id now, answered without asking the upstream.
    const before = upstreamCalls();
    await expect404(clients['file-gone'].files.retrieve(file.id), file.id);
    expect(upstreamCalls()).toBe(before);
    reappear();
  });

  /** A batch of one request of up to 97 output tokens: ~$0.97 held until it settles. */
  async function startBatch(k: KeyName) {
    const line = JSON.stringify({
      custom_id: 'r',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 97 },
    });
    const file = await upload(k, 'batch', line);
    const batch = await clients[k].batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const held = (await state(k)).heldUsd;
    expect(held).toBeGreaterThan(0.9);
    return { batch, held };
  }

  /** Reads `path` on the fake directly, `steps` times (each read moves the work a step), unseen by the gateway. */
  async function advanceUpstream(path: string, steps: number): Promise<Record<string, unknown>> {
    let body: Record<string, unknown> = {};
    for (let i = 0; i < steps; i++) {
      const res = await fetch(`${fake().url}/v1/${path}`, { headers: { authorization: 'Bearer sk-fake' } });
      expect(res.status).toBe(200);
      body = (await res.json()) as Record<string, unknown>;
    }
    return body;
  }

  it("releases a batch's hold once when the sweep has not found it for a day; found finished later, it is not charged", async () => {
    const { batch, held } = await startBatch('batch-sweep');
    vanish(`/batches/${batch.id}`);
    await stack.gateway.sweepBatches();
    clock += 12 * HOUR;
    await stack.gateway.sweepBatches();
    clock += 12 * HOUR - 1;
    await stack.gateway.sweepBatches();
    expect((await state('batch-sweep')).heldUsd).toBeCloseTo(held, 6);
    expect(await record('batch', batch.id)).toMatchObject({ count404: 2 });
    clock += 1;
    await stack.gateway.sweepBatches();
    expect(await state('batch-sweep')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await record('batch', batch.id)).toBeUndefined();
    // Settled at $0 under its own id: the claim is taken.
    expect(
      await stack.gateway.stores.ownership.claimed(
        'acme',
        'batch',
        [{ id: batch.id, createdAt: 0 }],
        'settled',
      ),
    ).toEqual([true]);
    // It comes back finished: neither a sweep nor a read charges it.
    reappear();
    expect((await advanceUpstream(`batches/${batch.id}`, 3)).status).toBe('completed');
    expect((await stack.gateway.sweepBatches()).costUsd).toBe(0);
    await expect404(clients['batch-sweep'].batches.retrieve(batch.id), batch.id);
    expect(await state('batch-sweep')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await charged('batch-sweep')).toEqual([]);
  });

  it("releases a batch's hold on the caller's reads spread over a day, exactly once", async () => {
    const { batch, held } = await startBatch('batch-read');
    vanish(`/batches/${batch.id}`);
    await expect404(clients['batch-read'].batches.retrieve(batch.id), batch.id);
    clock += 12 * HOUR;
    await expect404(clients['batch-read'].batches.retrieve(batch.id), batch.id);
    expect((await state('batch-read')).heldUsd).toBeCloseTo(held, 6);
    clock += 12 * HOUR;
    await expect404(clients['batch-read'].batches.retrieve(batch.id), batch.id);
    expect(await state('batch-read')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await record('batch', batch.id)).toBeUndefined();
    // A second read and a sweep change nothing.
    await expect404(clients['batch-read'].batches.retrieve(batch.id), batch.id);
    await stack.gateway.sweepBatches();
    expect(await state('batch-read')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await charged('batch-read')).toEqual([]);
    reappear();
  });

  it("keeps a batch's hold against a caller reading it again and again while the upstream answers 404", async () => {
    const { batch, held } = await startBatch('batch-burst');
    vanish(`/batches/${batch.id}`);
    // Thirty reads at once, then ten a minute apart, then one an hour short of the day.
    await Promise.all(
      Array.from({ length: 30 }, () =>
        expect404(clients['batch-burst'].batches.retrieve(batch.id), batch.id),
      ),
    );
    for (let i = 0; i < 10; i++) {
      clock += 60_000;
      await expect404(clients['batch-burst'].batches.retrieve(batch.id), batch.id);
    }
    clock += 23 * HOUR - 10 * 60_000;
    await expect404(clients['batch-burst'].batches.retrieve(batch.id), batch.id);
    expect((await state('batch-burst')).heldUsd).toBeCloseTo(held, 6);
    expect(await record('batch', batch.id)).toMatchObject({ count404: 2 });
    reappear();
  });

  /** A 3-epoch job on one short line: ~$0.98 held until it settles. */
  async function startJob(k: KeyName) {
    const file = await upload(k, 'fine-tune', '{"messages":[{"role":"user","content":"hi"}]}\n');
    const job = await clients[k].fineTuning.jobs.create({
      model: MODEL,
      training_file: file.id,
      hyperparameters: { n_epochs: 3 },
    });
    const held = (await state(k)).heldUsd;
    expect(held).toBeGreaterThan(0.9);
    return { job, held, up: parseJobId(job.id)!.upstreamId };
  }

  it("releases a fine-tuning job's hold on the caller's reads spread over a day, not on a burst, and a success between starts again", async () => {
    const { job, held, up } = await startJob('job-read');
    const read = () => clients['job-read'].fineTuning.jobs.retrieve(job.id);
    vanish(`/fine_tuning/jobs/${up}`);
    await Promise.all(Array.from({ length: 10 }, () => expect404(read(), job.id)));
    clock += 12 * HOUR;
    await expect404(read(), job.id);
    expect(await record('fine_tuning_job', `holder/${up}`)).toMatchObject({ count404: 2 });
    reappear();
    await read();
    expect((await record('fine_tuning_job', `holder/${up}`))?.count404).toBeUndefined();
    vanish(`/fine_tuning/jobs/${up}`);
    clock += 12 * HOUR;
    await expect404(read(), job.id);
    clock += 12 * HOUR;
    await expect404(read(), job.id);
    expect((await state('job-read')).heldUsd).toBeCloseTo(held, 6);
    clock += 12 * HOUR;
    await expect404(read(), job.id);
    expect(await state('job-read')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await record('fine_tuning_job', `holder/${up}`)).toBeUndefined();
    await expect404(read(), job.id);
    await stack.gateway.sweepJobs();
    expect(await state('job-read')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await charged('job-read')).toEqual([]);
    reappear();
  });

  it("releases a fine-tuning job's hold when the job sweep has not found it for a day; found succeeded later, it is not charged", async () => {
    const { job, held, up } = await startJob('job-sweep');
    vanish(`/fine_tuning/jobs/${up}`);
    await stack.gateway.sweepJobs();
    clock += 12 * HOUR;
    await stack.gateway.sweepJobs();
    clock += 12 * HOUR - 1;
    await stack.gateway.sweepJobs();
    expect((await state('job-sweep')).heldUsd).toBeCloseTo(held, 6);
    clock += 1;
    await stack.gateway.sweepJobs();
    expect(await state('job-sweep')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await record('fine_tuning_job', `holder/${up}`)).toBeUndefined();
    reappear();
    expect((await advanceUpstream(`fine_tuning/jobs/${up}`, 2)).status).toBe('succeeded');
    const read = await clients['job-sweep'].fineTuning.jobs.retrieve(job.id).withResponse();
    expect(read.data.status).toBe('succeeded');
    expect(costMicros(read.response.headers)).toBe(0);
    expect((await stack.gateway.sweepJobs()).costUsd).toBe(0);
    expect(await state('job-sweep')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await charged('job-sweep')).toEqual([]);
  });

  /** The platform admin's release of held work, as `key` asks for it. */
  const release = (key: string | undefined, body: unknown) =>
    fetch(`${stack.gateway.url}/api/v1/held-work/release`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
      body: JSON.stringify(body),
    });

  it("lets only the platform admin release a batch's hold, once; the batch is not charged when it finishes", async () => {
    const { batch, held } = await startBatch('admin-batch');
    const body = { tenant_id: 'acme', kind: 'batch', id: batch.id };
    expect((await release(`sk-gone-tenant-admin-${tag}`, body)).status).toBe(403);
    expect((await release(`sk-gone-admin-batch-${tag}`, body)).status).toBe(403);
    expect((await release(undefined, body)).status).toBe(401);
    expect((await state('admin-batch')).heldUsd).toBeCloseTo(held, 6);
    const badKind = await release(PLATFORM_KEY, { ...body, kind: 'file' });
    expect(badKind.status).toBe(400);
    expect(await badKind.json()).toMatchObject({ error: { param: 'kind', code: 400 } });
    const unknown = await release(PLATFORM_KEY, { ...body, id: 'batch_nope' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { param: 'id', code: 404 } });
    const first = await release(PLATFORM_KEY, body);
    expect(first.status).toBe(200);
    const answer = (await first.json()) as { released: boolean; key_id: string; held_usd: number };
    expect(answer).toMatchObject({ released: true, key_id: keyId('admin-batch') });
    expect(answer.held_usd).toBeCloseTo(held, 6);
    expect(await state('admin-batch')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await (await release(PLATFORM_KEY, body)).json()).toMatchObject({ released: false });
    // The caller still reads it; finished, neither the read nor the sweep charges it.
    expect((await advanceUpstream(`batches/${batch.id}`, 3)).status).toBe('completed');
    const read = await clients['admin-batch'].batches.retrieve(batch.id).withResponse();
    expect(read.data.status).toBe('completed');
    expect(costMicros(read.response.headers)).toBe(0);
    expect((await stack.gateway.sweepBatches()).costUsd).toBe(0);
    expect(await state('admin-batch')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
    expect(await charged('admin-batch')).toEqual([]);
  });

  it('refuses to release what holds nothing, and ids no store could hold, without echoing them', async () => {
    const user = await release(`sk-gone-admin-batch-${tag}`, { tenant_id: 'acme', kind: 'batch', id: 'b' });
    expect(user.status).toBe(403);
    const denied = (await user.json()) as { error: { message: string } };
    expect(denied.error.message).toMatch(/platform admin key/);
    expect(denied.error.message).not.toMatch(/analytics/);

    // A key without a budget: its batch holds nothing, so a "release" would only leave it uncharged.
    const owner = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-gone-no-budget-${tag}`, maxRetries: 0 });
    const line = JSON.stringify({
      custom_id: 'r',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 97 },
    });
    const file = await owner.files.create({
      file: await toFile(Buffer.from(line), 'f.jsonl'),
      purpose: 'batch',
    });
    const batch = await owner.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const body = { tenant_id: 'acme', kind: 'batch', id: batch.id };
    const none = await release(PLATFORM_KEY, body);
    expect(none.status).toBe(409);
    const refused = (await none.json()) as { error: { message: string; code: number; param: string } };
    expect(refused.error).toMatchObject({ code: 409, param: 'id' });
    expect(refused.error.message).toMatch(/holds nothing/);
    // Refused, not claimed: it settles (at its price, for the usage record) when it finishes.
    expect(
      await stack.gateway.stores.ownership.claimed(
        'acme',
        'batch',
        [{ id: batch.id, createdAt: batch.created_at * 1000 }],
        'settled',
      ),
    ).toEqual([false]);

    for (const [field, long] of [
      ['id', { ...body, id: 'x'.repeat(2_000_000) }],
      ['tenant_id', { ...body, tenant_id: 't'.repeat(300) }],
    ] as const) {
      const res = await release(PLATFORM_KEY, long);
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text.length).toBeLessThan(1000);
      expect(JSON.parse(text)).toMatchObject({ error: { param: field, code: 400 } });
    }
  });

  it("lets the platform admin release a fine-tuning job's hold by the id its caller sees", async () => {
    const { job } = await startJob('admin-job');
    const res = await release(PLATFORM_KEY, { tenant_id: 'acme', kind: 'fine_tuning_job', id: job.id });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ released: true, kind: 'fine_tuning_job', id: job.id });
    expect(await state('admin-job')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
  });
});
