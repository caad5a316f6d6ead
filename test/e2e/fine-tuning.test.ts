/** `/v1/fine_tuning/jobs` through the official client: owned by tenant and key, proxied to the deployment. */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-ft-owner';
const SIBLING_KEY = 'sk-ft-sibling';
const OTHER_KEY = 'sk-ft-other';
const BUDGET = { limitUsd: 100, period: 'monthly' as const };
/** USD per million trained tokens: dear, so one small job costs whole cents. */
const TRAINING_PRICE = 25_000;
let stack: Stack;
let owner: OpenAI;
let sibling: OpenAI;
let other: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!), capabilities: ['chat'] }),
      deployment({
        name: 'tuner',
        model: 'ft-test',
        upstreamModel: 'gpt-4o-mini-2024-07-18',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'fine_tuning', 'files'],
        pricing: {
          inputPerMillionTokens: 1,
          outputPerMillionTokens: 2,
          trainingPerMillionTokens: TRAINING_PRICE,
        },
      }),
      tenant('acme'),
      tenant('globex'),
      apiKey('acme-key', KEY, 'acme', { budget: BUDGET }),
      apiKey('acme-sibling', SIBLING_KEY, 'acme'),
      apiKey('globex-key', OTHER_KEY, 'globex'),
    ].join(''),
  );
  const client = (apiKey: string) => new OpenAI({ baseURL: stack.baseURL, apiKey, maxRetries: 0 });
  [owner, sibling, other] = [client(KEY), client(SIBLING_KEY), client(OTHER_KEY)];
});
afterAll(() => stack.close());

/** A training file of the caller's, as a fine-tuning job needs. */
const trainingFile = async (client: OpenAI) =>
  (
    await client.files.create({
      file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    })
  ).id;

const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => (e as { status?: number }).status,
  );

describe('fine-tuning jobs', () => {
  it('creates, retrieves, lists and cancels a job, only for the key that created it', async () => {
    const training = await trainingFile(owner);
    stack.fakes[0]!.reset();
    const { data: job, response } = await owner.fineTuning.jobs
      .create({ model: 'ft-test', training_file: training, metadata: { project: 'x' } })
      .withResponse();
    expect(job.id).toMatch(/^ftjob-gty/);
    expect(job.model).toBe('ft-test');
    expect(job.status).toBe('queued');
    expect(job.metadata).toEqual({ project: 'x' });
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/fine_tuning/jobs');
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: training,
      metadata: { project: 'x', gantry_tenant: 'acme', gantry_key: 'default/acme-key' },
    });
    const record = await usageRecord(stack, 'acme', response.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'fine_tuning', deployment: 'tuner', costUsd: 0, status: 200 });

    expect((await owner.fineTuning.jobs.retrieve(job.id)).id).toBe(job.id);
    const listed = await owner.fineTuning.jobs.list();
    expect(listed.data.map((j) => j.id)).toContain(job.id);

    // Another tenant, and another key of the same tenant, see nothing. (Their reads reach the
    // upstream before the owner check, so the fake's job moves on: it succeeds meanwhile.)
    expect(await status(other.fineTuning.jobs.retrieve(job.id))).toBe(404);
    expect(await status(sibling.fineTuning.jobs.retrieve(job.id))).toBe(404);
    expect(await status(other.fineTuning.jobs.cancel(job.id))).toBe(404);
    expect((await other.fineTuning.jobs.list()).data).toEqual([]);
    expect((await sibling.fineTuning.jobs.list()).data).toEqual([]);

    // Nor may they train on the owner's file.
    for (const client of [other, sibling]) {
      const err = await client.fineTuning.jobs.create({ model: 'ft-test', training_file: training }).then(
        () => new Error('expected a 404'),
        (e: unknown) => e as Error & { status?: number; param?: string },
      );
      expect(err).toMatchObject({ status: 404, param: 'training_file' });
    }

    const fresh = await owner.fineTuning.jobs.create({ model: 'ft-test', training_file: training });
    const cancelled = await owner.fineTuning.jobs.cancel(fresh.id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.id).toBe(fresh.id);
  });

  it('charges a succeeded job its trained tokens once, on whichever read sees it first', async () => {
    const spent = async () =>
      (await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/acme-key' }, BUDGET))
        .spentUsd;
    // Settle the earlier tests' jobs first: a list charges any it sees succeeded.
    await owner.fineTuning.jobs.list({ limit: 100 });
    const job = await owner.fineTuning.jobs.create({
      model: 'ft-test',
      training_file: await trainingFile(owner),
      hyperparameters: { n_epochs: 2 },
    });
    const before = await spent();
    // The fake moves a job one step per read: running, then succeeded.
    const running = await owner.fineTuning.jobs.retrieve(job.id).withResponse();
    expect(running.data.status).toBe('running');
    expect(running.response.headers.get('x-gantry-cost')).toBe('0.0');
    // Another key's reads neither see nor settle it.
    expect(await status(sibling.fineTuning.jobs.retrieve(job.id))).toBe(404);
    const done = await owner.fineTuning.jobs.retrieve(job.id).withResponse();
    expect(done.data.status).toBe('succeeded');
    const trained = done.data.trained_tokens!;
    expect(trained).toBeGreaterThan(0);
    const cost = (trained * TRAINING_PRICE) / 1e6;
    expect(Number(done.response.headers.get('x-gantry-cost'))).toBeCloseTo(cost, 6);
    expect((await spent()) - before).toBeCloseTo(cost, 6);
    const record = await usageRecord(stack, 'acme', done.response.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'fine_tuning', deployment: 'tuner', status: 200 });
    expect(record.costUsd).toBeCloseTo(cost, 6);

    // Later reads, a list that shows it and a too-late cancel charge nothing more.
    const again = await owner.fineTuning.jobs.retrieve(job.id).withResponse();
    expect(again.response.headers.get('x-gantry-cost')).toBe('0.0');
    const listed = await owner.fineTuning.jobs.list({ limit: 100 }).withResponse();
    expect(listed.data.data.map((j) => j.id)).toContain(job.id);
    expect(listed.response.headers.get('x-gantry-cost')).toBe('0.0');
    expect((await owner.fineTuning.jobs.cancel(job.id)).status).toBe('succeeded');
    expect((await spent()) - before).toBeCloseTo(cost, 6);
  });

  it('pages newest first', async () => {
    const a = await owner.fineTuning.jobs.create({
      model: 'ft-test',
      training_file: await trainingFile(owner),
    });
    const b = await owner.fineTuning.jobs.create({
      model: 'ft-test',
      training_file: await trainingFile(owner),
    });
    const ids = (await owner.fineTuning.jobs.list({ limit: 100 })).data.map((j) => j.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    const first = await owner.fineTuning.jobs.list({ limit: 1 });
    expect(first.data).toHaveLength(1);
    expect(first.has_more).toBe(true);
  });

  it('is a 400 naming the capability for a model without it, and reserved metadata', async () => {
    const err = await owner.fineTuning.jobs.create({ model: 'gpt-test', training_file: 'file-abc' }).then(
      () => new Error('expected a 400'),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain('fine_tuning capability');
    const reserved = await owner.fineTuning.jobs
      .create({ model: 'ft-test', training_file: 'f', metadata: { gantry_tenant: 'globex' } })
      .then(
        () => new Error('expected a 400'),
        (e: unknown) => e as Error,
      );
    expect(reserved.message).toContain('metadata.gantry_tenant');
    const missing = await fetch(`${stack.baseURL}/fine_tuning/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'ft-test' }),
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain(
      'training_file',
    );
  });

  it('is a 404 for ids that are not Gantry jobs', async () => {
    expect(await status(owner.fineTuning.jobs.retrieve('ftjob-abc'))).toBe(404);
    expect(
      await status(
        owner.fineTuning.jobs.retrieve('ftjob-gty' + Buffer.from('["tuner","nope"]').toString('base64url')),
      ),
    ).toBe(404);
  });
});
