/**
 * Files and batches through the official client against a real gateway and the fake provider:
 * shapes, what is charged (X-Gantry-Cost against the key's budget spend), and that another
 * key or tenant gets a 404 (never the object, never an upstream call), on lists and on ids
 * referred to inside bodies too.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  costMicros,
  failure,
  MAX_UPLOAD_BYTES,
  MODEL,
  PRICES,
  startResourceStack,
  status,
  UPSTREAM_MODEL,
  type ResourceStack,
} from '../harness/resources.ts';
import { usageRecord } from '../harness/usage-record.ts';

let s: ResourceStack;
let charged = 0;

beforeAll(async () => {
  s = await startResourceStack('files');
});
afterAll(() => s.close());

const batchLine = (id: string, text: string, model = MODEL) =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: text }] },
  });

describe('files', () => {
  it('uploads, reads, lists, downloads and deletes a file, free of charge', async () => {
    const { data: file, response } = await s.owner.files
      .create({ file: await toFile(Buffer.from('hello gateway'), 'notes.txt'), purpose: 'assistants' })
      .withResponse();
    expect(file).toMatchObject({ object: 'file', bytes: 13, filename: 'notes.txt', purpose: 'assistants' });
    expect(file.id).toMatch(/^file-/);
    expect(response.headers.get('x-gantry-provider')).toBe('holder');
    expect(costMicros(response.headers)).toBe(0);
    const record = await usageRecord(s.stack, 'acme', response.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'files', deployment: 'holder', costUsd: 0, status: 200 });

    expect(await s.owner.files.retrieve(file.id)).toMatchObject({ id: file.id, filename: 'notes.txt' });
    expect((await s.owner.files.list()).data.map((f) => f.id)).toContain(file.id);
    expect((await s.owner.files.list({ purpose: 'batch' })).data.map((f) => f.id)).not.toContain(file.id);
    expect(await (await s.owner.files.content(file.id)).text()).toBe('hello gateway');

    const before = s.upstreamCalls();
    for (const client of [s.sibling, s.other]) {
      const err = await failure(client.files.retrieve(file.id));
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: 'not_found', code: 404, param: 'file_id' });
      expect(JSON.stringify(err.error)).not.toContain('notes.txt');
      expect(await status(client.files.content(file.id))).toBe(404);
      expect(await status(client.files.delete(file.id))).toBe(404);
      expect((await client.files.list()).data).toEqual([]);
    }
    expect(s.upstreamCalls()).toBe(before);

    expect(await s.owner.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
    expect(await status(s.owner.files.retrieve(file.id))).toBe(404);
  });

  it('refuses a bad purpose (400 naming it) and a file over the upload limit (413)', async () => {
    const bad = await failure(
      s.owner.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'nonsense' as 'batch' }),
    );
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ param: 'purpose' });
    const big = await failure(
      s.owner.files.create({
        file: await toFile(Buffer.alloc(MAX_UPLOAD_BYTES + 1), 'big.bin'),
        purpose: 'user_data',
      }),
    );
    expect(big.status).toBe(413);
    expect(String(big.error.message)).toContain('64 KB');
  });

  it('checks a batch input file: one model the key may use, named per line', async () => {
    const mixed = await failure(
      s.owner.files.create({
        file: await toFile(
          Buffer.from(`${batchLine('a', 'x')}\n${batchLine('b', 'y', 'chat-only')}\n`),
          'in.jsonl',
        ),
        purpose: 'batch',
      }),
    );
    expect(mixed.status).toBe(400);
    expect(String(mixed.error.message)).toContain('line 2');
    const unknown = await failure(
      s.owner.files.create({
        file: await toFile(Buffer.from(batchLine('a', 'x', 'not-a-model')), 'in.jsonl'),
        purpose: 'batch',
      }),
    );
    expect(unknown.status).toBe(404);
    expect(unknown.error).toMatchObject({ param: 'model' });
  });
});

describe('batches', () => {
  it('runs a batch to completion, charging its usage once at the deployment token prices', async () => {
    const input = [batchLine('q1', 'What is a gateway?'), batchLine('q2', 'Name a fox.')].join('\n');
    const file = await s.owner.files.create({
      file: await toFile(Buffer.from(input), 'in.jsonl'),
      purpose: 'batch',
    });
    // The deployment receives its own model name on every line.
    const stored = await (await s.owner.files.content(file.id)).text();
    expect(stored).toContain(`"model":"${UPSTREAM_MODEL}"`);

    const before = s.upstreamCalls();
    for (const client of [s.sibling, s.other]) {
      const err = await failure(
        client.batches.create({
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        }),
      );
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ param: 'input_file_id' });
    }
    expect(s.upstreamCalls()).toBe(before);

    const { data: batch, response } = await s.owner.batches
      .create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .withResponse();
    expect(batch).toMatchObject({
      object: 'batch',
      status: 'validating',
      input_file_id: file.id,
      model: MODEL,
    });
    expect(costMicros(response.headers)).toBe(0);

    let seen = batch;
    let completedCost = 0;
    for (let i = 0; i < 10 && seen.status !== 'completed'; i++) {
      const r = await s.owner.batches.retrieve(batch.id).withResponse();
      seen = r.data;
      if (seen.status === 'completed') completedCost = costMicros(r.response.headers);
      else expect(costMicros(r.response.headers)).toBe(0);
    }
    expect(seen.status).toBe('completed');
    expect(seen.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const usage = seen.usage!;
    expect(usage.input_tokens).toBeGreaterThan(0);
    const expected = Math.round(
      usage.input_tokens * PRICES.inputPerMillionTokens + usage.output_tokens * PRICES.outputPerMillionTokens,
    );
    expect(completedCost).toBe(expected);
    charged += completedCost;

    // Seen again (retrieve and list): charged once only.
    const again = await s.owner.batches.retrieve(batch.id).withResponse();
    expect(costMicros(again.response.headers)).toBe(0);
    const listed = await s.owner.batches.list().withResponse();
    expect(listed.data.data.map((b) => b.id)).toContain(batch.id);
    expect(costMicros(listed.response.headers)).toBe(0);
    expect(await s.spentMicros()).toBe(charged);

    // The output file is the owner's, and only the owner's.
    const output = await (await s.owner.files.content(seen.output_file_id!)).text();
    expect(
      output
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { custom_id: string }).custom_id),
    ).toEqual(['q1', 'q2']);
    const calls = s.upstreamCalls();
    for (const client of [s.sibling, s.other]) {
      expect(await status(client.files.content(seen.output_file_id!))).toBe(404);
      expect(await status(client.batches.retrieve(batch.id))).toBe(404);
      expect(await status(client.batches.cancel(batch.id))).toBe(404);
      expect((await client.batches.list()).data).toEqual([]);
    }
    expect(s.upstreamCalls()).toBe(calls);
  });

  it('cancels, and refuses a file of another purpose or a bad endpoint', async () => {
    const file = await s.owner.files.create({
      file: await toFile(Buffer.from(batchLine('c', 'x')), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await s.owner.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect((await s.owner.batches.cancel(batch.id)).status).toBe('cancelling');
    expect((await s.owner.batches.retrieve(batch.id)).status).toBe('cancelled');

    const notes = await s.owner.files.create({
      file: await toFile(Buffer.from('n'), 'n.txt'),
      purpose: 'user_data',
    });
    const wrong = await failure(
      s.owner.batches.create({
        input_file_id: notes.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.error).toMatchObject({ param: 'input_file_id' });
    const endpoint = await failure(
      s.owner.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/nowhere' as '/v1/embeddings',
        completion_window: '24h',
      }),
    );
    expect(endpoint.error).toMatchObject({ param: 'endpoint' });
    expect(await s.spentMicros()).toBe(charged);
  });

  it('charges a batch once when a list is the first read to see it finished', async () => {
    const file = await s.owner.files.create({
      file: await toFile(Buffer.from(batchLine('l1', 'Listed, not retrieved.')), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await s.owner.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    let listedCost = 0;
    let seen: (typeof batch)['usage'];
    // Each list reads every batch afresh; the fake moves a batch one step per read.
    for (let i = 0; i < 4; i++) {
      const { data, response } = await s.owner.batches.list().withResponse();
      listedCost += costMicros(response.headers);
      seen = data.data.find((b) => b.id === batch.id)?.usage ?? seen;
    }
    expect(seen).toBeDefined();
    const expected = Math.round(
      seen!.input_tokens * PRICES.inputPerMillionTokens + seen!.output_tokens * PRICES.outputPerMillionTokens,
    );
    expect(listedCost).toBe(expected);
    charged += expected;
    expect(costMicros((await s.owner.batches.retrieve(batch.id).withResponse()).response.headers)).toBe(0);
    expect(await s.spentMicros()).toBe(charged);
  });

  it("refuses a batch the key's budget cannot cover (402), before anything runs upstream", async () => {
    const file = await s.poor.files.create({
      file: await toFile(Buffer.from(batchLine('p', 'x')), 'in.jsonl'),
      purpose: 'batch',
    });
    const before = s.upstreamCalls();
    const refused = await failure(
      s.poor.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
    );
    expect(refused.status).toBe(402);
    expect(refused.error).toMatchObject({ type: 'budget_exceeded' });
    expect(s.upstreamCalls()).toBe(before);
  });
});

describe('auth and rate limits', () => {
  it('apply as on every route', async () => {
    expect(await status(s.limited.files.list())).toBe(200);
    expect(await status(s.limited.batches.list())).toBe(200);
    const limited = await failure(s.limited.vectorStores.list());
    expect(limited.status).toBe(429);
    expect(limited.error).toMatchObject({ type: 'rate_limit_exceeded' });
    const anonymous = await fetch(`${s.stack.baseURL}/files`, {
      headers: { authorization: 'Bearer sk-nobody' },
    });
    expect(anonymous.status).toBe(401);
  });
});
