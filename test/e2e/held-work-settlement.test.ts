/**
 * Held work settled exactly once, whoever sees it finished: deployments sharing one provider
 * account (same base URL and key, as load balancing has them) all list a fine-tuning job, and a
 * caller may address it through any of them; the sweeps settle jobs and batches nobody reads,
 * a failed charge leaves the work to the next tick, and an upstream 404 (not found now) neither
 * settles nor drops held work: it is charged when it is found again.
 * In process and with real Redis; the sweeps are driven by calling them, never by a timer.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldJob, jobId, parseJobId } from '../../dataplane/src/pipeline/fine-tuning/jobs.ts';
import {
  chargeThenClaim,
  heldWorkId,
  HOLD_TTL_MS,
} from '../../dataplane/src/pipeline/resources/held-work.ts';
import { StoreUnavailableError } from '../../dataplane/src/stores/errors.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { costMicros, failure } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const MODEL = 'shared-account-model';
/** $0.01 an output token, $0.025 a trained token. */
const PRICES = { inputPerMillionTokens: 1, outputPerMillionTokens: 10_000, trainingPerMillionTokens: 25_000 };
const BUDGET = { limitUsd: 1, period: 'monthly' as const };
const KEYS = [
  'list',
  'crafted',
  'sweep-fail',
  'job-sweep',
  'job-sweep-cancel',
  'gone-sweep',
  'gone-read',
  'glitch-job',
  'glitch-batch',
  'glitch-batch-sweep',
  'legacy-list',
  'legacy-record',
  'legacy-race',
  'legacy-upgrade-read',
  'legacy-upgrade-sweep',
  'creator-gone',
  'creator-gone-expired',
  'legacy-gone-sweep-first',
  'legacy-gone-read-first',
  'legacy-gone-race',
  'creator-gone-forbidden',
  'creator-gone-failing',
] as const;
type KeyName = (typeof KEYS)[number];

const backends = [
  { name: 'in-process', tag: 'mem', opts: {} },
  { name: 'redis', tag: 'redis', opts: { redisUrl: testRedisUrl(), redisPrefix: `settle-${randomUUID()}` } },
];

describe.each(backends)('held work settled once ($name)', ({ tag, opts }) => {
  let stack: Stack;
  const clients = {} as Record<KeyName, OpenAI>;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          // Two deployments of one model on one provider account.
          ...['tuner-a', 'tuner-b'].map((name) =>
            deployment({
              name,
              model: MODEL,
              baseUrl: fakeBase(url!),
              capabilities: ['chat', 'fine_tuning', 'files', 'batches'],
              pricing: PRICES,
            }),
          ),
          tenant('acme'),
          ...KEYS.map((k) => apiKey(`${k}-${tag}`, `sk-settle-${k}-${tag}`, 'acme', { budget: BUDGET })),
        ].join(''),
      { ...opts, batchSweepMs: 0 },
    );
    for (const k of KEYS)
      clients[k] = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-settle-${k}-${tag}`, maxRetries: 0 });
  });
  afterAll(() => stack.close());

  const state = (k: KeyName) =>
    stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: `default/${k}-${tag}` }, BUDGET);

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

  /** A 3-epoch job on one short line (~$0.98 held). */
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
    expect((await state(k)).heldUsd).toBeGreaterThan(0.9);
    return job;
  }

  /** A job taken to succeeded upstream, unseen by the gateway; its training in µ$. */
  async function succeededJob(k: KeyName) {
    const job = await startJob(k);
    const upstream = await advanceUpstream(`fine_tuning/jobs/${parseJobId(job.id)!.upstreamId}`, 2);
    expect(upstream.status).toBe('succeeded');
    const dueMicros = Math.round(Number(upstream.trained_tokens) * PRICES.trainingPerMillionTokens);
    expect(dueMicros).toBeGreaterThan(0);
    return { job, dueMicros };
  }

  it('charges a job once when both deployments of its provider account list it, and lists it once', async () => {
    const { job, dueMicros } = await succeededJob('list');
    const listed = await clients.list.fineTuning.jobs.list().withResponse();
    expect(listed.data.data.map((j) => j.id)).toEqual([job.id]);
    expect(costMicros(listed.response.headers)).toBe(dueMicros);
    const after = await state('list');
    expect(Math.round(after.spentUsd * 1e6)).toBe(dueMicros);
    expect(after.heldUsd).toBe(0);
    // Listed again: nothing more.
    await clients.list.fineTuning.jobs.list();
    expect(Math.round((await state('list')).spentUsd * 1e6)).toBe(dueMicros);
  });

  it('charges a job once when it is retrieved through the other deployment of its account too', async () => {
    const { job, dueMicros } = await succeededJob('crafted');
    const ref = parseJobId(job.id)!;
    const other = jobId({
      deployment: ref.deployment === 'tuner-a' ? 'tuner-b' : 'tuner-a',
      upstreamId: ref.upstreamId,
    });
    const viaOther = await clients.crafted.fineTuning.jobs.retrieve(other).withResponse();
    expect(viaOther.data.status).toBe('succeeded');
    const viaOwn = await clients.crafted.fineTuning.jobs.retrieve(job.id).withResponse();
    expect(costMicros(viaOther.response.headers) + costMicros(viaOwn.response.headers)).toBe(dueMicros);
    const after = await state('crafted');
    expect(Math.round(after.spentUsd * 1e6)).toBe(dueMicros);
    expect(after.heldUsd).toBe(0);
  });

  /** A batch of one request of up to 97 output tokens (~$0.97 held), taken to completed upstream; its cost in µ$. */
  async function completedBatch(k: KeyName) {
    const client = clients[k];
    const line = JSON.stringify({
      custom_id: 'r',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 97 },
    });
    const file = await client.files.create({
      file: await toFile(Buffer.from(line), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect((await state(k)).heldUsd).toBeGreaterThan(0.9);
    const upstream = await advanceUpstream(`batches/${batch.id}`, 3);
    expect(upstream.status).toBe('completed');
    const usage = upstream.usage as { input_tokens: number; output_tokens: number };
    const dueMicros = Math.round(
      usage.input_tokens * PRICES.inputPerMillionTokens + usage.output_tokens * PRICES.outputPerMillionTokens,
    );
    return { batch, dueMicros };
  }

  /** Runs `f` while the budget store refuses every charge (the real store, one fault injected). */
  async function withChargesFailing<T>(f: () => Promise<T>): Promise<T> {
    const budgets = stack.gateway.stores.budgets;
    const charge = budgets.charge.bind(budgets);
    budgets.charge = () => Promise.reject(new StoreUnavailableError('budget.charge'));
    try {
      return await f();
    } finally {
      budgets.charge = charge;
    }
  }

  it('leaves a batch the sweep could not charge unsettled: a read (or a restarted pod) settles it once', async () => {
    const { batch, dueMicros } = await completedBatch('sweep-fail');
    const failed = await withChargesFailing(() => stack.gateway.sweepBatches());
    expect(failed.failed).toBeGreaterThanOrEqual(1);
    // Nothing charged, the hold still there, and no claim taken: nothing lives only in this pod.
    expect(await state('sweep-fail')).toMatchObject({ spentUsd: 0 });
    expect((await state('sweep-fail')).heldUsd).toBeGreaterThan(0.9);
    const read = await clients['sweep-fail'].batches.retrieve(batch.id).withResponse();
    expect(read.data.status).toBe('completed');
    expect(costMicros(read.response.headers)).toBe(dueMicros);
    const after = await state('sweep-fail');
    expect(after.heldUsd).toBe(0);
    expect(Math.round(after.spentUsd * 1e6)).toBe(dueMicros);
    // The next sweep finds it settled and charges nothing more.
    expect((await stack.gateway.sweepBatches()).costUsd).toBe(0);
    expect(Math.round((await state('sweep-fail')).spentUsd * 1e6)).toBe(dueMicros);
  });

  it('settles a succeeded job nobody reads on the job sweep, once, and a later read or sweep charges nothing', async () => {
    const { job, dueMicros } = await succeededJob('job-sweep');
    const sweep = await stack.gateway.sweepJobs();
    expect(Math.round(sweep.costUsd * 1e6)).toBe(dueMicros);
    const after = await state('job-sweep');
    expect(after.heldUsd).toBe(0);
    expect(Math.round(after.spentUsd * 1e6)).toBe(dueMicros);
    const read = await clients['job-sweep'].fineTuning.jobs.retrieve(job.id).withResponse();
    expect(read.data.status).toBe('succeeded');
    expect(costMicros(read.response.headers)).toBe(0);
    expect((await stack.gateway.sweepJobs()).costUsd).toBe(0);
    expect(Math.round((await state('job-sweep')).spentUsd * 1e6)).toBe(dueMicros);
  });

  it('releases the hold of a job cancelled upstream on the job sweep, charging nothing', async () => {
    const job = await startJob('job-sweep-cancel');
    const cancelled = await fetch(
      `${stack.fakes[0]!.url}/v1/fine_tuning/jobs/${parseJobId(job.id)!.upstreamId}/cancel`,
      {
        method: 'POST',
        headers: { authorization: 'Bearer sk-fake', 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(cancelled.status).toBe(200);
    await stack.gateway.sweepJobs();
    expect(await state('job-sweep-cancel')).toMatchObject({ heldUsd: 0, spentUsd: 0 });
  });

  /**
   * A batch the upstream no longer has, holding $0.90 of the key's budget: the record and hold
   * a create leaves, for an id the fake does not know (its batches never vanish on their own).
   */
  async function vanishedBatch(k: KeyName): Promise<string> {
    const id = `batch_gone_${randomUUID()}`;
    const stores = stack.gateway.stores;
    const keyRef = { tenant: 'acme', keyId: `default/${k}-${tag}` };
    const reserved = await stores.budgets.reserve({ ...keyRef, budget: BUDGET, estimateUsd: 0.9 });
    if (!reserved.ok) throw new Error('reserve refused');
    await stores.budgets.retain(reserved.reservation, heldWorkId('batch', 'acme', id), HOLD_TTL_MS.batch);
    await stores.ownership.put({
      family: 'batch',
      id,
      ...keyRef,
      deployment: 'tuner-a',
      model: MODEL,
      createdAt: Date.now(),
      estimateUsd: 0.9,
    });
    expect((await state(k)).heldUsd).toBeCloseTo(0.9, 6);
    return id;
  }

  it('keeps the hold and record of a batch the sweep does not find upstream (404): nothing released or dropped', async () => {
    const id = await vanishedBatch('gone-sweep');
    await stack.gateway.sweepBatches();
    expect((await state('gone-sweep')).heldUsd).toBeCloseTo(0.9, 6);
    expect((await state('gone-sweep')).spentUsd).toBe(0);
    expect(await stack.gateway.stores.ownership.get('acme', 'batch', id)).toMatchObject({ id });
    // Still queued: the next sweep asks again.
    const before = stack.fakes[0]!.requests.length;
    await stack.gateway.sweepBatches();
    const asked = stack.fakes[0]!.requests.slice(before).filter((r) => r.path.endsWith(`/batches/${id}`));
    expect(asked).toHaveLength(1);
  });

  it('answers 404 to a read of a batch not found upstream, keeping its hold and record', async () => {
    const id = await vanishedBatch('gone-read');
    const read = await failure(clients['gone-read'].batches.retrieve(id));
    expect(read.status).toBe(404);
    expect((await state('gone-read')).heldUsd).toBeCloseTo(0.9, 6);
    expect(await stack.gateway.stores.ownership.get('acme', 'batch', id)).toMatchObject({ id });
  });

  it('charges a job whose sweep met one transient 404 when it is read succeeded later', async () => {
    const job = await startJob('glitch-job');
    const up = parseJobId(job.id)!.upstreamId;
    stack.fakes[0]!.setFaults([
      { times: 1, match: { path: `/fine_tuning/jobs/${up}` }, fault: { type: 'status', status: 404 } },
    ]);
    await stack.gateway.sweepJobs();
    stack.fakes[0]!.setFaults([]);
    // The 404 released nothing: the worst case is still held.
    expect((await state('glitch-job')).heldUsd).toBeGreaterThan(0.9);
    const done = await advanceUpstream(`fine_tuning/jobs/${up}`, 2);
    expect(done.status).toBe('succeeded');
    const dueMicros = Math.round(Number(done.trained_tokens) * PRICES.trainingPerMillionTokens);
    const read = await clients['glitch-job'].fineTuning.jobs.retrieve(job.id).withResponse();
    expect(read.data.status).toBe('succeeded');
    expect(costMicros(read.response.headers)).toBe(dueMicros);
    expect(await state('glitch-job')).toMatchObject({ heldUsd: 0 });
    expect(Math.round((await state('glitch-job')).spentUsd * 1e6)).toBe(dueMicros);
  });

  it('still serves and charges a batch after a read met one transient 404', async () => {
    const { batch, dueMicros } = await completedBatch('glitch-batch');
    stack.fakes[0]!.setFaults([
      { times: 1, match: { path: `/batches/${batch.id}` }, fault: { type: 'status', status: 404 } },
    ]);
    expect((await failure(clients['glitch-batch'].batches.retrieve(batch.id))).status).toBe(404);
    stack.fakes[0]!.setFaults([]);
    expect((await state('glitch-batch')).heldUsd).toBeGreaterThan(0.9);
    const read = await clients['glitch-batch'].batches.retrieve(batch.id).withResponse();
    expect(read.data.status).toBe('completed');
    expect(costMicros(read.response.headers)).toBe(dueMicros);
    expect(await state('glitch-batch')).toMatchObject({ heldUsd: 0 });
    expect(Math.round((await state('glitch-batch')).spentUsd * 1e6)).toBe(dueMicros);
  });

  it('charges a batch on the sweep after an earlier tick met one transient 404', async () => {
    const { batch, dueMicros } = await completedBatch('glitch-batch-sweep');
    stack.fakes[0]!.setFaults([
      { times: 1, match: { path: `/batches/${batch.id}` }, fault: { type: 'status', status: 404 } },
    ]);
    await stack.gateway.sweepBatches();
    stack.fakes[0]!.setFaults([]);
    expect((await state('glitch-batch-sweep')).heldUsd).toBeGreaterThan(0.9);
    await stack.gateway.sweepBatches();
    expect(await state('glitch-batch-sweep')).toMatchObject({ heldUsd: 0 });
    expect(Math.round((await state('glitch-batch-sweep')).spentUsd * 1e6)).toBe(dueMicros);
  });

  /**
   * A job as the gateway created it before its metadata named the creating deployment: owner
   * keys only, made on the fake directly, and taken to succeeded; its training in µ$.
   */
  async function legacyJob(k: KeyName) {
    const file = await clients[k].files.create({
      file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    const res = await fetch(`${stack.fakes[0]!.url}/v1/fine_tuning/jobs`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-fake', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        training_file: file.id,
        hyperparameters: { n_epochs: 1 },
        metadata: { gantry_tenant: 'acme', gantry_key: `default/${k}-${tag}`, gantry_model: MODEL },
      }),
    });
    expect(res.status).toBe(200);
    const created = (await res.json()) as { id: string; created_at: number };
    const done = await advanceUpstream(`fine_tuning/jobs/${created.id}`, 2);
    expect(done.status).toBe('succeeded');
    const dueMicros = Math.round(Number(done.trained_tokens) * PRICES.trainingPerMillionTokens);
    expect(dueMicros).toBeGreaterThan(0);
    return { up: created.id, createdAt: created.created_at * 1000, dueMicros };
  }

  it('lists and charges a job whose metadata names no creator once across the deployments of its account', async () => {
    const { up, dueMicros } = await legacyJob('legacy-list');
    const listed = await clients['legacy-list'].fineTuning.jobs.list().withResponse();
    expect(listed.data.data.map((j) => parseJobId(j.id)!.upstreamId)).toEqual([up]);
    expect(costMicros(listed.response.headers)).toBe(dueMicros);
    // Through each deployment's id, then listed again: nothing more.
    for (const d of ['tuner-a', 'tuner-b'])
      await clients['legacy-list'].fineTuning.jobs.retrieve(jobId({ deployment: d, upstreamId: up }));
    await clients['legacy-list'].fineTuning.jobs.list();
    expect(Math.round((await state('legacy-list')).spentUsd * 1e6)).toBe(dueMicros);
  });

  it('charges a job naming no creator and held by no record once when read through two deployments at once', async () => {
    const { up, dueMicros } = await legacyJob('legacy-race');
    await Promise.all(
      ['tuner-a', 'tuner-b'].map((d) =>
        clients['legacy-race'].fineTuning.jobs.retrieve(jobId({ deployment: d, upstreamId: up })),
      ),
    );
    expect(Math.round((await state('legacy-race')).spentUsd * 1e6)).toBe(dueMicros);
  });

  it("settles a job naming no creator under its ownership record's deployment, releasing that hold", async () => {
    const { up, createdAt, dueMicros } = await legacyJob('legacy-record');
    // Its hold and record, as the old create on tuner-b left them.
    const stores = stack.gateway.stores;
    const keyRef = { tenant: 'acme', keyId: `default/legacy-record-${tag}` };
    const reserved = await stores.budgets.reserve({ ...keyRef, budget: BUDGET, estimateUsd: 0.5 });
    if (!reserved.ok) throw new Error('reserve refused');
    const settlement = `tuner-b/${up}`;
    await stores.budgets.retain(
      reserved.reservation,
      heldWorkId('fine_tuning_job', 'acme', settlement),
      HOLD_TTL_MS.fine_tuning_job,
    );
    await stores.ownership.put({
      family: 'fine_tuning_job',
      id: settlement,
      ...keyRef,
      deployment: 'tuner-b',
      model: MODEL,
      createdAt,
      estimateUsd: 0.5,
    });
    const read = await clients['legacy-record'].fineTuning.jobs
      .retrieve(jobId({ deployment: 'tuner-a', upstreamId: up }))
      .withResponse();
    expect(costMicros(read.response.headers)).toBe(dueMicros);
    expect(await state('legacy-record')).toMatchObject({ heldUsd: 0 });
    await clients['legacy-record'].fineTuning.jobs.retrieve(jobId({ deployment: 'tuner-b', upstreamId: up }));
    await stack.gateway.sweepJobs();
    expect(Math.round((await state('legacy-record')).spentUsd * 1e6)).toBe(dueMicros);
  });

  /**
   * A job naming no creator, held under its record on tuner-b, and settled by a read before
   * budget-holds-4 under its reader's name (tuner-a), as that code did.
   */
  async function settledBeforeUpgrade(k: KeyName) {
    const { up, createdAt, dueMicros } = await legacyJob(k);
    const stores = stack.gateway.stores;
    const keyRef = { tenant: 'acme', keyId: `default/${k}-${tag}` };
    const reserved = await stores.budgets.reserve({ ...keyRef, budget: BUDGET, estimateUsd: 0.5 });
    if (!reserved.ok) throw new Error('reserve refused');
    const settlement = `tuner-b/${up}`;
    await stores.budgets.retain(
      reserved.reservation,
      heldWorkId('fine_tuning_job', 'acme', settlement),
      HOLD_TTL_MS.fine_tuning_job,
    );
    const record = {
      family: 'fine_tuning_job' as const,
      id: settlement,
      ...keyRef,
      deployment: 'tuner-b',
      model: MODEL,
      createdAt,
      estimateUsd: 0.5,
    };
    await stores.ownership.put(record);
    const old = heldJob(keyRef, `tuner-a/${up}`, { created_at: createdAt / 1000 });
    expect(await chargeThenClaim(stores, BUDGET, old, dueMicros / 1e6)).toBe(true);
    expect(await state(k)).toMatchObject({ heldUsd: 0.5 });
    expect(Math.round((await state(k)).spentUsd * 1e6)).toBe(dueMicros);
    return { up, dueMicros, record };
  }

  it('releases, uncharged, the hold of a job a read settled under its reader before the upgrade', async () => {
    const { up, dueMicros } = await settledBeforeUpgrade('legacy-upgrade-read');
    const read = await clients['legacy-upgrade-read'].fineTuning.jobs
      .retrieve(jobId({ deployment: 'tuner-a', upstreamId: up }))
      .withResponse();
    expect(costMicros(read.response.headers)).toBe(0);
    await stack.gateway.sweepJobs();
    const after = await state('legacy-upgrade-read');
    expect({ held: after.heldUsd, spent: Math.round(after.spentUsd * 1e6) }).toEqual({
      held: 0,
      spent: dueMicros,
    });
  });

  it('does not charge again on the sweep a job a read settled under its reader before the upgrade', async () => {
    const { dueMicros, record } = await settledBeforeUpgrade('legacy-upgrade-sweep');
    await stack.gateway.sweepJobs();
    const after = await state('legacy-upgrade-sweep');
    expect({ held: after.heldUsd, spent: Math.round(after.spentUsd * 1e6) }).toEqual({
      held: 0,
      spent: dueMicros,
    });
    // Its record is finished: settled for every pod, so no later tick or read looks at it again.
    const [settled] = await stack.gateway.stores.ownership.claimed(
      'acme',
      'fine_tuning_job',
      [record],
      'settled',
    );
    expect(settled).toBe(true);
  });

  /** Holds 0.5 and writes the record a create on `deployment` (of `model`) left for job `up`. */
  async function heldRecord(k: KeyName, deployment: string, model: string, up: string, createdAt: number) {
    const stores = stack.gateway.stores;
    const keyRef = { tenant: 'acme', keyId: `default/${k}-${tag}` };
    const reserved = await stores.budgets.reserve({ ...keyRef, budget: BUDGET, estimateUsd: 0.5 });
    if (!reserved.ok) throw new Error('reserve refused');
    const id = `${deployment}/${up}`;
    await stores.budgets.retain(
      reserved.reservation,
      heldWorkId('fine_tuning_job', 'acme', id),
      HOLD_TTL_MS.fine_tuning_job,
    );
    const record = {
      family: 'fine_tuning_job' as const,
      id,
      ...keyRef,
      deployment,
      model,
      createdAt,
      estimateUsd: 0.5,
    };
    await stores.ownership.put(record);
    return record;
  }

  it('charges on the sweep, at the dearest price, a job whose creator left the config, read through its account', async () => {
    const k = 'creator-gone';
    const file = await clients[k].files.create({
      file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    const res = await fetch(`${stack.fakes[0]!.url}/v1/fine_tuning/jobs`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-fake', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        training_file: file.id,
        hyperparameters: { n_epochs: 1 },
        metadata: {
          gantry_tenant: 'acme',
          gantry_key: `default/${k}-${tag}`,
          gantry_model: MODEL,
          gantry_deployment: 'tuner-gone',
        },
      }),
    });
    expect(res.status).toBe(200);
    const created = (await res.json()) as { id: string; created_at: number };
    const done = await advanceUpstream(`fine_tuning/jobs/${created.id}`, 2);
    expect(done.status).toBe('succeeded');
    const dueMicros = Math.round(Number(done.trained_tokens) * PRICES.trainingPerMillionTokens);
    await heldRecord(k, 'tuner-gone', MODEL, created.id, created.created_at * 1000);
    await stack.gateway.sweepJobs();
    const after = await state(k);
    expect({ held: after.heldUsd, spent: Math.round(after.spentUsd * 1e6) }).toEqual({
      held: 0,
      spent: dueMicros,
    });
    // A read through the account's deployment finds it settled.
    const read = await clients[k].fineTuning.jobs
      .retrieve(jobId({ deployment: 'tuner-a', upstreamId: created.id }))
      .withResponse();
    expect(costMicros(read.response.headers)).toBe(0);
  });

  it('stops sweeping a job nothing configured can read once its hold has lapsed', async () => {
    const k = 'creator-gone-expired';
    const createdAt = Date.now() - HOLD_TTL_MS.fine_tuning_job - 60_000;
    const record = await heldRecord(k, 'tuner-gone', 'model-gone', 'ftjob-nowhere', createdAt);
    await stack.gateway.sweepJobs();
    const store = stack.gateway.stores.ownership;
    const taken = await store.unsettled(1000, 'fine_tuning_job');
    for (const r of taken) await store.swept(r, false);
    expect(taken.map((r) => r.id)).not.toContain(record.id);
  });

  /** A job naming no creator whose record (and hold) is under `tuner-old`, since gone from the config. */
  async function legacyOnGoneCreator(k: KeyName) {
    const { up, createdAt, dueMicros } = await legacyJob(k);
    await heldRecord(k, 'tuner-old', MODEL, up, createdAt);
    const spent = async () => {
      const s = await state(k);
      return { held: s.heldUsd, spent: Math.round(s.spentUsd * 1e6) };
    };
    return { up, dueMicros, spent };
  }

  it('charges once a job naming no creator, recorded under a creator gone from the config, swept then read', async () => {
    const { up, dueMicros, spent } = await legacyOnGoneCreator('legacy-gone-sweep-first');
    await stack.gateway.sweepJobs();
    expect(await spent()).toEqual({ held: 0, spent: dueMicros });
    const read = await clients['legacy-gone-sweep-first'].fineTuning.jobs
      .retrieve(jobId({ deployment: 'tuner-b', upstreamId: up }))
      .withResponse();
    expect(costMicros(read.response.headers)).toBe(0);
    expect(await spent()).toEqual({ held: 0, spent: dueMicros });
  });

  it('charges once a job naming no creator, recorded under a creator gone from the config, read then swept', async () => {
    const { up, dueMicros, spent } = await legacyOnGoneCreator('legacy-gone-read-first');
    const read = await clients['legacy-gone-read-first'].fineTuning.jobs
      .retrieve(jobId({ deployment: 'tuner-b', upstreamId: up }))
      .withResponse();
    expect(costMicros(read.response.headers)).toBe(dueMicros);
    // Settled under the record's id: that hold is released by the read itself.
    expect(await spent()).toEqual({ held: 0, spent: dueMicros });
    await stack.gateway.sweepJobs();
    expect(await spent()).toEqual({ held: 0, spent: dueMicros });
  });

  it('charges once a job naming no creator, recorded under a creator gone from the config, read and swept at once', async () => {
    const { up, dueMicros, spent } = await legacyOnGoneCreator('legacy-gone-race');
    await Promise.all([
      stack.gateway.sweepJobs(),
      clients['legacy-gone-race'].fineTuning.jobs.retrieve(jobId({ deployment: 'tuner-a', upstreamId: up })),
    ]);
    expect(await spent()).toEqual({ held: 0, spent: dueMicros });
  });

  it('reads on through the next deployment when one that is not the creator answers 403 on the sweep', async () => {
    const k = 'creator-gone-forbidden';
    const { up, createdAt, dueMicros } = await legacyJob(k);
    await heldRecord(k, 'tuner-gone', MODEL, up, createdAt);
    // The first deployment asked (tuner-a) refuses; tuner-b has the job.
    stack.fakes[0]!.setFaults([
      { times: 1, match: { path: `/fine_tuning/jobs/${up}` }, fault: { type: 'status', status: 403 } },
    ]);
    await stack.gateway.sweepJobs();
    stack.fakes[0]!.setFaults([]);
    const after = await state(k);
    expect({ held: after.heldUsd, spent: Math.round(after.spentUsd * 1e6) }).toEqual({
      held: 0,
      spent: dueMicros,
    });
  });

  it('stops sweeping a job whose reads keep failing once its hold has lapsed', async () => {
    const k = 'creator-gone-failing';
    // A job the fake has (it answers 404 for others before any fault), held past its hold.
    const { up } = await legacyJob(k);
    const createdAt = Date.now() - HOLD_TTL_MS.fine_tuning_job - 60_000;
    const record = await heldRecord(k, 'tuner-gone', MODEL, up, createdAt);
    stack.fakes[0]!.setFaults([
      { match: { path: `/fine_tuning/jobs/${up}` }, fault: { type: 'status', status: 500 } },
    ]);
    await stack.gateway.sweepJobs();
    stack.fakes[0]!.setFaults([]);
    const store = stack.gateway.stores.ownership;
    const taken = await store.unsettled(1000, 'fine_tuning_job');
    for (const r of taken) await store.swept(r, false);
    expect(taken.map((r) => r.id)).not.toContain(record.id);
  });
});
