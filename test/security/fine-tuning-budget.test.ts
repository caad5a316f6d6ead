/**
 * A fine-tuning job is charged when it has trained, hours after it was created: a key with a
 * budget must not be able to start training its budget cannot pay for. Creating a job holds
 * its worst case (the training file's tokens times its epochs) against the budget, and a job
 * that cannot fit is a 402 before anything reaches the provider.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnedRecord } from '../../dataplane/src/stores/ownership/types.ts';
import { failure } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-ft-budget';
/** A key of its own for the unsettled-jobs case, so the other cases' jobs do not count on it. */
const JOBS_KEY = 'sk-ft-budget-jobs';
const CJK_KEY = 'sk-ft-budget-cjk';
const EPOCHS_KEY = 'sk-ft-budget-epochs';
const SPENT_KEY = 'sk-ft-budget-spent';
const OVERRUN_KEY = 'sk-ft-budget-overrun';
const UNRECORDED_KEY = 'sk-ft-budget-unrecorded';
/** Between chars ÷ 4 of the Chinese file below ($1,313 a pass) and its real tokens ($2,372). */
const CJK_BUDGET = { limitUsd: 2_000, period: 'monthly' as const };
/** USD per million trained tokens: $0.025 a token. */
const TRAINING_PRICE = 25_000;
const BUDGET = { limitUsd: 1, period: 'monthly' as const };

let stack: Stack;
let client: OpenAI;
let jobsClient: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'tuner',
        model: 'ft-test',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'fine_tuning', 'files'],
        pricing: {
          inputPerMillionTokens: 1,
          outputPerMillionTokens: 2,
          trainingPerMillionTokens: TRAINING_PRICE,
        },
      }),
      tenant('acme'),
      apiKey('tuner-key', KEY, 'acme', { budget: BUDGET }),
      apiKey('jobs-key', JOBS_KEY, 'acme', { budget: BUDGET }),
      apiKey('cjk-key', CJK_KEY, 'acme', { budget: CJK_BUDGET }),
      apiKey('epochs-key', EPOCHS_KEY, 'acme', { budget: BUDGET }),
      apiKey('spent-key', SPENT_KEY, 'acme', { budget: BUDGET }),
      apiKey('overrun-key', OVERRUN_KEY, 'acme', { budget: BUDGET }),
      apiKey('unrecorded-key', UNRECORDED_KEY, 'acme', { budget: BUDGET }),
      // No training price: its jobs hold nothing.
      deployment({
        name: 'tuner-unpriced',
        model: 'ft-unpriced',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'fine_tuning', 'files'],
      }),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  jobsClient = new OpenAI({ baseURL: stack.baseURL, apiKey: JOBS_KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const upload = async (bytes: number, by = client): Promise<string> => {
  const line = '{"messages":[{"role":"user","content":"hi"}]}\n';
  const text = line.repeat(Math.max(1, Math.floor(bytes / line.length)));
  return (
    await by.files.create({ file: await toFile(Buffer.from(text), 'train.jsonl'), purpose: 'fine-tune' })
  ).id;
};

const jobPosts = () =>
  stack.fakes[0]!.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/fine_tuning/jobs')).length;

const spentUsd = async () =>
  (await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/tuner-key' }, BUDGET)).spentUsd;

describe('fine-tuning on a budget', () => {
  it('refuses (402) a job whose training the budget cannot cover, before the provider sees it', async () => {
    // About 1,000 tokens a pass: three epochs are $75 on a $1 budget.
    const file = await upload(4_000);
    const posts = jobPosts();
    const refused = await failure(
      client.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: file,
        hyperparameters: { n_epochs: 3 },
      }),
    );
    expect(refused.status).toBe(402);
    expect(refused.error).toMatchObject({ type: 'budget_exceeded', code: 402 });
    expect(jobPosts()).toBe(posts);
    expect(await spentUsd()).toBe(0);
  });

  it('counts epochs left to the provider (auto) at the most it may choose, and says how to hold less', async () => {
    // About 12 tokens a pass: 3 epochs are ~$0.9, which fits; 50 (auto's worst) are not.
    const file = await upload(48);
    const auto = await failure(client.fineTuning.jobs.create({ model: 'ft-test', training_file: file }));
    expect(auto.status).toBe(402);
    expect(String(auto.error.message)).toContain('n_epochs');
    const job = await client.fineTuning.jobs.create({
      model: 'ft-test',
      training_file: file,
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 3 } } },
    });
    expect(job.status).toBe('queued');
    expect(await spentUsd()).toBe(0);
  });

  it('takes training files uploaded for fine-tune only (400 naming the field), so none escapes the hold', async () => {
    const line = '{"messages":[{"role":"user","content":"hi"}]}\n';
    const other = await client.files.create({
      file: await toFile(Buffer.from(line.repeat(100)), 'train.jsonl'),
      purpose: 'user_data',
    });
    const posts = jobPosts();
    const refused = await failure(
      client.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: other.id,
        hyperparameters: { n_epochs: 1 },
      }),
    );
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ param: 'training_file' });
    expect(String(refused.error.message)).toContain('purpose fine-tune');
    expect(jobPosts()).toBe(posts);
  });

  it("keeps a started job's worst case held until a read sees it finished, so jobs together cannot overrun the budget", async () => {
    // About 12 tokens a pass: 3 epochs are ~$0.9 each on a $1 budget; one fits, two do not.
    const file = await upload(48, jobsClient);
    const create = () =>
      jobsClient.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: file,
        hyperparameters: { n_epochs: 3 },
      });
    const first = await create();
    const posts = jobPosts();
    const second = await failure(create());
    expect(second.status).toBe(402);
    expect(String(second.error.message)).toContain('1 unsettled fine-tuning job');
    // The held amount is stated once (the store's), the count beside it.
    expect(String(second.error.message).match(/\$[0-9.]+ of (it|the budget) is held/g)).toHaveLength(1);
    expect(jobPosts()).toBe(posts);
    // A cancelled job trains no more: seeing it so releases its hold, and the next one starts.
    expect((await jobsClient.fineTuning.jobs.cancel(first.id)).status).toBe('cancelled');
    const next = await create();
    // Two reads take the fake's job to succeeded: charged, and no longer held on top of the charge.
    await jobsClient.fineTuning.jobs.retrieve(next.id);
    expect((await jobsClient.fineTuning.jobs.retrieve(next.id)).status).toBe('succeeded');
    const spent = (
      await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/jobs-key' }, BUDGET)
    ).spentUsd;
    expect(spent).toBeCloseTo(0.9, 6);
    const third = await failure(create());
    expect(third.status).toBe(402);
    expect(String(third.error.message)).not.toContain('unsettled');
    expect(spent).toBeLessThanOrEqual(BUDGET.limitUsd);
  });

  it('counts a large non-English training file at no fewer tokens than it holds', async () => {
    // Over 200,000 characters, where a whole-file count used to fall back to chars ÷ 4: ~52,500
    // tokens, when o200k counts ~94,900 (Chinese runs ~0.45 tokens a character here).
    const line =
      '{"messages":[{"role":"user","content":"月球距离地球大约有多远？请简单说明。"},{"role":"assistant","content":"平均约三十八万四千四百公里，近地点和远地点之间会有变化。"}]}\n';
    const cjk = new OpenAI({ baseURL: stack.baseURL, apiKey: CJK_KEY, maxRetries: 0 });
    const file = await cjk.files.create({
      file: await toFile(Buffer.from(line.repeat(Math.ceil(210_000 / line.length))), 'zh.jsonl'),
      purpose: 'fine-tune',
    });
    const posts = jobPosts();
    const refused = await failure(
      cjk.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: file.id,
        hyperparameters: { n_epochs: 1 },
      }),
    );
    expect(refused.status).toBe(402);
    expect(jobPosts()).toBe(posts);
  });

  it("reads the epochs of the method that trains: a legacy n_epochs beside the method's auto holds auto's most", async () => {
    const epochs = new OpenAI({ baseURL: stack.baseURL, apiKey: EPOCHS_KEY, maxRetries: 0 });
    // About 12 tokens a pass: one epoch is ~$0.30 and fits $1; 50 (auto's worst) do not.
    const file = await upload(48, epochs);
    const posts = jobPosts();
    const refused = await failure(
      epochs.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: file,
        hyperparameters: { n_epochs: 1 },
        method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 'auto' } } },
      }),
    );
    expect(refused.status).toBe(402);
    expect(String(refused.error.message)).toContain('n_epochs');
    expect(jobPosts()).toBe(posts);
  });

  it('says to set n_epochs only when the epochs are what is held, not for a spent budget refusing a $0 hold', async () => {
    const spent = new OpenAI({ baseURL: stack.baseURL, apiKey: SPENT_KEY, maxRetries: 0 });
    const line = '{"messages":[{"role":"user","content":"hi"}]}\n';
    const file = await spent.files.create(
      { file: await toFile(Buffer.from(line), 'train.jsonl'), purpose: 'fine-tune' },
      { headers: { 'x-gantry-model': 'ft-unpriced' } },
    );
    await stack.gateway.stores.budgets.charge({
      tenant: 'acme',
      keyId: 'default/spent-key',
      budget: BUDGET,
      amountUsd: BUDGET.limitUsd,
      id: 'spend-it-all',
    });
    const refused = await failure(
      spent.fineTuning.jobs.create({ model: 'ft-unpriced', training_file: file.id }),
    );
    expect(refused.status).toBe(402);
    expect(String(refused.error.message)).not.toContain('n_epochs');
  });

  it('lets a key whose budget is spent read, list and cancel its jobs, and charges training done past the limit', async () => {
    const overrun = new OpenAI({ baseURL: stack.baseURL, apiKey: OVERRUN_KEY, maxRetries: 0 });
    const state = () =>
      stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/overrun-key' }, BUDGET);
    const line = '{"messages":[{"role":"user","content":"hi"}]}\n';
    const unpricedFile = await overrun.files.create(
      { file: await toFile(Buffer.from(line), 'train.jsonl'), purpose: 'fine-tune' },
      { headers: { 'x-gantry-model': 'ft-unpriced' } },
    );
    const stoppable = await overrun.fineTuning.jobs.create({
      model: 'ft-unpriced',
      training_file: unpricedFile.id,
    });
    // About 12 tokens a pass: 3 epochs are ~$0.90, which fits the $1 budget.
    const job = await overrun.fineTuning.jobs.create({
      model: 'ft-test',
      training_file: await upload(48, overrun),
      hyperparameters: { n_epochs: 3 },
    });
    // The rest of the key's spend (chat, say) takes the whole budget meanwhile.
    await stack.gateway.stores.budgets.charge({
      tenant: 'acme',
      keyId: 'default/overrun-key',
      budget: BUDGET,
      amountUsd: BUDGET.limitUsd,
      id: 'overrun-spend-it-all',
    });
    expect((await overrun.fineTuning.jobs.cancel(stoppable.id)).status).toBe('cancelled');
    const listed = await overrun.fineTuning.jobs.list();
    expect(listed.data.map((j) => j.id)).toContain(job.id);
    let seen = await overrun.fineTuning.jobs.retrieve(job.id);
    for (let reads = 1; seen.status !== 'succeeded' && reads < 5; reads++)
      seen = await overrun.fineTuning.jobs.retrieve(job.id);
    expect(seen.status).toBe('succeeded');
    // The training happened: charged over the limit, once, however often it is read again.
    await overrun.fineTuning.jobs.retrieve(job.id);
    const after = await state();
    expect(after.spentUsd).toBeCloseTo(BUDGET.limitUsd + 0.9, 6);
    expect(after.heldUsd).toBe(0);
  });

  it('answers a job the provider created even when its worst case cannot be recorded, so no retry starts another, and still holds it', async () => {
    const unrecorded = new OpenAI({ baseURL: stack.baseURL, apiKey: UNRECORDED_KEY, maxRetries: 0 });
    const file = await upload(48, unrecorded);
    const store = stack.gateway.stores.ownership;
    const put = store.put.bind(store);
    // The real store, with one fault injected: the job's budget record cannot be written.
    store.put = async (r: OwnedRecord) => {
      if (r.family === 'fine_tuning_job') throw new Error('ownership store down');
      return put(r);
    };
    const posts = jobPosts();
    let job;
    try {
      job = await unrecorded.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: file,
        hyperparameters: { n_epochs: 3 },
      });
    } finally {
      store.put = put;
    }
    expect(jobPosts()).toBe(posts + 1);
    expect(job.status).toBe('queued');
    expect((await unrecorded.fineTuning.jobs.retrieve(job.id)).id).toBe(job.id);
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/unrecorded-key' },
      BUDGET,
    );
    // The hold lives in the budget store, not on the record: the job counts all the same.
    expect(state.heldUsd).toBeCloseTo(0.975, 6);
  });
});
