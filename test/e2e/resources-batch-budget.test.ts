/**
 * Batches against the key's budget, and bad input in the owned-resource families: a batch's
 * worst case stays counted until it settles (so batches that each fit cannot together
 * overspend), estimates are clamped (never Infinity, which JSON stores as null), a deeply
 * nested batch line is a 400 naming it, a list that cannot observe one batch still charges
 * the others, and a chat naming a file its deployment lost is the caller's 404, not a fault.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ESTIMATE_USD } from '../../dataplane/src/accounting/estimate.ts';
import type { OwnedRecord } from '../../dataplane/src/stores/ownership/types.ts';
import {
  BUDGET,
  failure,
  MODEL,
  OWNER_KEY_ID,
  startResourceStack,
  type ResourceStack,
} from '../harness/resources.ts';

let s: ResourceStack;

beforeAll(async () => {
  s = await startResourceStack('bbud', { maxUploadBytes: 1024 * 1024 });
});
afterAll(() => s.close());

const line = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra },
  });

const upload = async (text: string) =>
  s.owner.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });

const createBatch = (fileId: string) =>
  s.owner.batches.create({
    input_file_id: fileId,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });

/** Moves a batch a step on the fake itself (one step per read), unseen by the gateway. */
async function advanceUpstream(batchId: string, steps = 3): Promise<void> {
  for (let i = 0; i < steps; i++) {
    const res = await fetch(`${s.stack.fakes[0]!.url}/v1/batches/${batchId}`, {
      headers: { authorization: 'Bearer sk-fake' },
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }
}

const stored = async (family: 'file' | 'batch', id: string) =>
  s.stack.gateway.stores.ownership.get('acme', family, id);

describe('batch estimates', () => {
  it('are clamped to the estimate ceiling: max_tokens and n of 1e300 are refused (402), not free', async () => {
    const file = await upload(line('a', { max_tokens: 1e300, n: 1e300 }));
    expect((await stored('file', file.id))?.estimateUsd).toBe(MAX_ESTIMATE_USD);
    const refused = await failure(createBatch(file.id));
    expect(refused.status).toBe(402);
    expect(refused.error).toMatchObject({ type: 'budget_exceeded' });
  });
});

describe('batches on a budget', () => {
  it('hold each batch in the budget: a $1e9 budget refuses $6e8 beside $7e8 unsettled', async () => {
    // One line of n sequences of 4,000 output tokens at $2,000/M: $8 a sequence.
    const richFile = async (n: number) =>
      s.rich.files.create({
        file: await toFile(Buffer.from(line('r', { max_tokens: 4000, n })), 'in.jsonl'),
        purpose: 'batch',
      });
    const big = await richFile(87_500_000);
    expect((await stored('file', big.id))?.estimateUsd).toBeCloseTo(7e8, 0);
    const create = (fileId: string) =>
      s.rich.batches.create({
        input_file_id: fileId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
    await create(big.id);
    const next = await richFile(75_000_000);
    const refused = await failure(create(next.id));
    // The first batch's $7e8 is held in the budget itself: $3e8 is left for the $6e8 batch.
    expect(refused.status).toBe(402);
    expect(String(refused.error.message)).toMatch(/\$29999999\d\.\d+ remaining/);
    expect(String(refused.error.message)).toMatch(/estimated at \$6000000\d\d\.\d+/);
    expect(String(refused.error.message)).toContain("this key's 1 unsettled batch");
  });

  it('count each unsettled batch at its worst case: on a budget that fits one, the second waits for the first', async () => {
    // 10 requests of 4,000 output tokens at $2,000/M: about $80 of the owner's $100.
    const text = Array.from({ length: 10 }, (_, i) => line(`c${i}`, { max_tokens: 4000 })).join('\n');
    const file = await upload(text);
    const estimate = (await stored('file', file.id))!.estimateUsd!;
    expect(estimate).toBeGreaterThan(80);
    expect(estimate).toBeLessThan(81);

    const first = await createBatch(file.id);
    expect((await stored('batch', first.id))?.estimateUsd).toBe(estimate);
    const before = s.upstreamCalls();
    for (let i = 0; i < 2; i++) {
      const refused = await failure(createBatch(file.id));
      expect(refused.status).toBe(402);
      expect(refused.error).toMatchObject({ type: 'budget_exceeded' });
      expect(String(refused.error.message)).toContain("this key's 1 unsettled batch");
      expect(String(refused.error.message)).toContain(`$${estimate.toFixed(10).replace(/0+$/, '')}`);
    }
    // Refused before anything went upstream.
    expect(s.upstreamCalls()).toBe(before);

    // Once the first has finished and is charged (its real, small cost), the budget is free again.
    await advanceUpstream(first.id);
    const spent = await s.spentMicros();
    expect((await s.owner.batches.retrieve(first.id)).status).toBe('completed');
    expect(await s.spentMicros()).toBeGreaterThan(spent);
    const second = await createBatch(file.id);
    expect(second.status).toBe('validating');
    expect((await failure(createBatch(file.id))).status).toBe(402);

    // A finished batch reporting no usage (cancelled early) settles too, and stops counting.
    await s.owner.batches.cancel(second.id);
    await s.owner.batches.retrieve(second.id);
    const third = await createBatch(file.id);
    await advanceUpstream(third.id);
    expect((await s.owner.batches.retrieve(third.id)).status).toBe('completed');
  });

  it('a list that cannot observe one finished batch still charges, and unqueues, the others', async () => {
    const a = await createBatch((await upload(line('a'))).id);
    const b = await createBatch((await upload(line('b'))).id);
    await advanceUpstream(a.id);
    await advanceUpstream(b.id);
    const aOutput = (await (
      await fetch(`${s.stack.fakes[0]!.url}/v1/batches/${a.id}`, {
        headers: { authorization: 'Bearer sk-fake' },
      })
    ).json()) as { output_file_id: string };
    const store = s.stack.gateway.stores.ownership;
    const put = store.put.bind(store);
    // The real store, with one fault injected: adopting the output file of `a` fails.
    store.put = async (r: OwnedRecord) => {
      if (r.id === aOutput.output_file_id) throw new Error('store down');
      return put(r);
    };
    const spent = await s.spentMicros();
    let listed;
    try {
      listed = await s.owner.batches.list().withResponse();
    } finally {
      store.put = put;
    }
    expect(listed.data.data.map((x) => x.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    const charged = Number(listed.response.headers.get('x-gantry-cost'));
    expect(charged).toBeGreaterThan(0);
    expect(Math.round((await s.spentMicros()) - spent)).toBe(Math.round(charged * 1e6));
    // `b` left the sweep queue; `a` (not settled) is still in it, and charged by the next read.
    const taken = await store.unsettled(1000);
    const queued = taken.map((r) => r.id);
    expect(queued).toContain(a.id);
    expect(queued).not.toContain(b.id);
    // Taking them leased them; looked at and still running, as a sweep's tick ends, frees them.
    for (const r of taken) await store.swept(r, false);
    const { response } = await s.owner.batches.retrieve(a.id).withResponse();
    expect(Number(response.headers.get('x-gantry-cost'))).toBeGreaterThan(0);
    expect((await store.unsettled(1000)).map((r) => r.id)).not.toContain(a.id);
  });
});

describe('batch input lines', () => {
  it('nested deeper than the JSON depth limit are a 400 naming the line, not a 500', async () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    const text = `${line('ok')}\n${line('a').slice(0, -2)},"x":${deep}}}`;
    const refused = await failure(upload(text));
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ param: 'file' });
    expect(String(refused.error.message)).toContain('file[line 2]: JSON nesting depth exceeds 64');
  });
});

describe('a chat naming a file its deployment no longer has', () => {
  it("is the caller's 404 naming the field, and never opens the deployment's breaker", async () => {
    const file = await s.owner.files.create({
      file: await toFile(Buffer.from('notes'), 'n.txt'),
      purpose: 'user_data',
    });
    s.stack.fakes[0]!.setFaults([
      {
        match: { path: '/chat/completions' },
        // OpenAI's words for a file it does not hold: the 404 blames the named file.
        fault: { type: 'status', status: 404, message: `No such File object: ${file.id}` },
      },
    ]);
    try {
      for (let i = 0; i < 6; i++) {
        const refused = await failure(
          s.owner.chat.completions.create({
            model: MODEL,
            messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: file.id } }] }],
          }),
        );
        expect(refused.status).toBe(404);
        expect(refused.error).toMatchObject({ param: 'messages[0].content[0].file.file_id' });
      }
    } finally {
      s.stack.fakes[0]!.setFaults([]);
    }
    expect(s.stack.gateway.health.circuitState('holder')).toBe('closed');
    const ok = await s.owner.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(ok.choices[0]?.message.role).toBe('assistant');
  });
});

describe('a key whose budget is spent', () => {
  // Last in this file: it spends the owner's whole budget.
  it('still reads, lists and cancels its batches, and a finished one is charged past the limit', async () => {
    const file = await upload(line('spent', { max_tokens: 10 }));
    const running = await createBatch(file.id);
    const stoppable = await createBatch(file.id);
    await s.stack.gateway.stores.budgets.charge({
      tenant: 'acme',
      keyId: OWNER_KEY_ID,
      budget: BUDGET,
      amountUsd: BUDGET.limitUsd,
      id: 'batch-owner-spend-it-all',
    });
    const spent = await s.spentMicros();
    expect(spent).toBeGreaterThanOrEqual(BUDGET.limitUsd * 1e6);
    expect((await s.owner.batches.cancel(stoppable.id)).id).toBe(stoppable.id);
    expect((await s.owner.batches.retrieve(running.id)).status).not.toBe('completed');
    await advanceUpstream(running.id);
    const listed = await s.owner.batches.list().withResponse();
    expect(listed.data.data.map((b) => b.id)).toContain(running.id);
    const charged = Number(listed.response.headers.get('x-gantry-cost'));
    expect(charged).toBeGreaterThan(0);
    expect((await s.owner.batches.retrieve(running.id)).status).toBe('completed');
    expect(Math.round((await s.spentMicros()) - spent)).toBe(Math.round(charged * 1e6));
  });
});
