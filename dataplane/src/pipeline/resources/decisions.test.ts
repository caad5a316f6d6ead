/** The pure decisions of owned resources: placement, references, pages, batch input and charge. */
import type { Capability } from '@gantry/crds';
import { describe, expect, it } from 'vitest';
import type { Deployment, ModelRoute } from '../../config/snapshot.ts';
import { GatewayError } from '../../errors.ts';
import { testDeployment, testTarget } from '../../router/testing.ts';
import type { OwnedRecord } from '../../stores/ownership/types.ts';
import {
  batchCostUsd,
  MAX_BATCH_REQUESTS,
  MAX_TOKENS_PER_BATCH_REQUEST,
  batchEstimateUsd,
  finishedBatchUsage,
  readBatchInput,
  upstreamBatchInput,
} from './batch.ts';
import { pageOf, parseListQuery } from './paging.ts';
import { referencesOf } from './references.ts';
import { commonDeployment, placement } from './select.ts';

const dep = (name: string, model: string, caps: Capability[], priority = 1): Deployment =>
  testDeployment({
    name,
    model,
    priority,
    capabilities: new Set(caps),
    target: testTarget({ upstreamModel: `${model}-up` }),
  });

function models(...deps: Deployment[]): Map<string, ModelRoute> {
  const out = new Map<string, ModelRoute>();
  for (const d of deps) {
    const r = out.get(d.model);
    const list = [...(r?.deployments ?? []), d];
    out.set(d.model, {
      model: d.model,
      deployments: list,
      fallbacks: [],
      capabilities: new Set(list.flatMap((x) => [...x.capabilities])),
      ownedBy: 'openai',
    });
  }
  return out;
}

const thrown = (f: () => unknown): GatewayError => {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('expected a GatewayError');
};

describe('placement', () => {
  const a = dep('a', 'alpha', ['chat', 'files'], 2);
  const b = dep('b', 'beta', ['files', 'vector_stores'], 1);
  const c = dep('c', 'gamma', ['chat']);
  const all = models(a, b, c);
  const base = { models: all, allowed: () => true, capability: 'files' as const, what: 'files' };

  it("without a model or references, takes the caller's lowest-priority capable model", () => {
    expect(placement(base)).toEqual({ kind: 'model', model: 'beta' });
    expect(placement({ ...base, allowed: (m) => m !== 'beta' })).toEqual({ kind: 'model', model: 'alpha' });
  });

  it('is a 400 naming the capability when nothing the key may use holds the family', () => {
    const e = thrown(() => placement({ ...base, allowed: (m) => m === 'gamma' }));
    expect(e.status).toBe(400);
    expect(e.message).toContain('files capability');
  });

  it('takes the model named, refusing one the key may not use (404) or without the capability (400)', () => {
    expect(placement({ ...base, requestedModel: 'alpha' })).toEqual({ kind: 'model', model: 'alpha' });
    expect(thrown(() => placement({ ...base, requestedModel: 'alpha', allowed: () => false })).status).toBe(
      404,
    );
    const e = thrown(() => placement({ ...base, requestedModel: 'gamma' }));
    expect([e.status, e.param]).toEqual([400, 'model']);
  });

  it('pins to the deployment holding referenced objects, which must hold the family and serve the model named', () => {
    const pinned = { deployment: b, field: 'file_ids[0]' };
    expect(placement({ ...base, capability: 'vector_stores', pinned })).toEqual({
      kind: 'pinned',
      ...pinned,
    });
    expect(thrown(() => placement({ ...base, capability: 'assistants', pinned })).param).toBe('file_ids[0]');
    expect(thrown(() => placement({ ...base, requestedModel: 'alpha', pinned })).param).toBe('file_ids[0]');
  });

  it('needs every referenced object on one deployment, naming the first field that differs', () => {
    expect(commonDeployment([])).toBeUndefined();
    expect(
      commonDeployment([
        { field: 'file_ids[0]', deployment: 'a' },
        { field: 'file_ids[1]', deployment: 'a' },
      ]),
    ).toEqual({ deployment: 'a', field: 'file_ids[0]' });
    const e = thrown(() =>
      commonDeployment([
        { field: 'file_ids[0]', deployment: 'a' },
        { field: 'file_ids[1]', deployment: 'b' },
      ]),
    );
    expect(e.param).toBe('file_ids[1]');
  });
});

describe('references', () => {
  it('finds the ids each body refers to, by field', () => {
    expect(referencesOf('batch', { input_file_id: 'file-1' })).toEqual([
      { field: 'input_file_id', family: 'file', id: 'file-1' },
    ]);
    expect(referencesOf('vector_store', { file_ids: ['f1', 'f2'] }).map((r) => r.field)).toEqual([
      'file_ids[0]',
      'file_ids[1]',
    ]);
    expect(referencesOf('container_file', { file_id: 'f' })).toEqual([
      { field: 'file_id', family: 'file', id: 'f' },
    ]);
    const assistant = referencesOf('assistant', {
      tool_resources: {
        code_interpreter: { file_ids: ['f1'] },
        file_search: { vector_store_ids: ['vs1'], vector_stores: [{ file_ids: ['f2'] }] },
      },
    });
    expect(assistant).toEqual([
      { field: 'tool_resources.code_interpreter.file_ids[0]', family: 'file', id: 'f1' },
      { field: 'tool_resources.file_search.vector_store_ids[0]', family: 'vector_store', id: 'vs1' },
      { field: 'tool_resources.file_search.vector_stores[0].file_ids[0]', family: 'file', id: 'f2' },
    ]);
    expect(referencesOf('assistant', { model: 'm' })).toEqual([]);
  });
});

describe('pages', () => {
  const rec = (id: string) => ({ id }) as OwnedRecord;
  const newestFirst = ['e', 'd', 'c', 'b', 'a'].map(rec);
  const ids = (p: { records: OwnedRecord[] }) => p.records.map((r) => r.id);

  it('pages newest first by default, oldest first with order=asc, after and before a cursor', () => {
    expect(ids(pageOf(newestFirst, parseListQuery({ limit: '2' })))).toEqual(['e', 'd']);
    expect(pageOf(newestFirst, parseListQuery({ limit: '2' })).hasMore).toBe(true);
    expect(ids(pageOf(newestFirst, parseListQuery({ limit: '2', after: 'd' })))).toEqual(['c', 'b']);
    expect(ids(pageOf(newestFirst, parseListQuery({ order: 'asc', after: 'c' })))).toEqual(['d', 'e']);
    expect(ids(pageOf(newestFirst, parseListQuery({ limit: '2', before: 'b' })))).toEqual(['d', 'c']);
    // Another caller's id as a cursor shows nothing rather than a guess.
    expect(ids(pageOf(newestFirst, parseListQuery({ after: 'someone-elses' })))).toEqual([]);
  });

  it('refuses a bad limit or order naming the parameter', () => {
    expect(thrown(() => parseListQuery({ limit: '0' })).param).toBe('limit');
    expect(thrown(() => parseListQuery({ limit: '101' })).param).toBe('limit');
    expect(thrown(() => parseListQuery({ order: 'sideways' })).param).toBe('order');
  });
});

describe('batch input and charge', () => {
  const line = (id: string, model: string) =>
    JSON.stringify({
      custom_id: id,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model, messages: [] },
    });

  it('reads one model from the file and rewrites it to the deployment name', () => {
    const input = readBatchInput(`${line('a', 'm')}\n\n${line('b', 'm')}\n`);
    expect(input.model).toBe('m');
    const up = upstreamBatchInput(input, 'm-up').trim().split('\n');
    expect(up.map((l) => (JSON.parse(l) as { body: { model: string } }).body.model)).toEqual([
      'm-up',
      'm-up',
    ]);
  });

  it('counts lines through blank, CRLF and whitespace-only lines, with or without a final newline', () => {
    const text = `\n\r\n${line('a', 'm')}\r\n  \n\n${line('b', 'm')}`;
    expect(readBatchInput(text).lineNumbers).toEqual([3, 6]);
    expect(readBatchInput(`${text}\n`).lineNumbers).toEqual([3, 6]);
    expect(thrown(() => readBatchInput(`\n\n\n${line('c', 'n')}\n\nx`)).message).toContain('line 6');
    expect(thrown(() => readBatchInput('\n'.repeat(100_000))).message).toContain('no requests');
  });

  it('names the line of every problem', () => {
    expect(thrown(() => readBatchInput(`${line('a', 'm')}\n${line('b', 'n')}`)).message).toContain('line 2');
    expect(thrown(() => readBatchInput(`${line('a', 'm')}\n${line('a', 'm')}`)).message).toContain('repeats');
    expect(thrown(() => readBatchInput('not json')).message).toContain('line 1');
    expect(thrown(() => readBatchInput('')).message).toContain('no requests');
    const get = JSON.stringify({
      custom_id: 'x',
      method: 'GET',
      url: '/v1/chat/completions',
      body: { model: 'm' },
    });
    expect(thrown(() => readBatchInput(get)).message).toContain('method');
  });

  it('charges a finished batch its tokens, cached input at the cached price; nothing while it runs', () => {
    const usage = { input_tokens: 1000, input_tokens_details: { cached_tokens: 400 }, output_tokens: 50 };
    expect(finishedBatchUsage({ status: 'in_progress', usage })).toBeUndefined();
    expect(finishedBatchUsage({ status: 'completed' })).toBeUndefined();
    const u = finishedBatchUsage({ status: 'completed', usage })!;
    expect(u).toMatchObject({
      prompt_tokens: 1000,
      completion_tokens: 50,
      prompt_tokens_details: { cached_tokens: 400 },
    });
    const pricing = { inputPerMillionTokens: 2, outputPerMillionTokens: 8, cachedInputPerMillionTokens: 1 };
    // 600 × 2 + 400 × 1 + 50 × 8 micro-dollars.
    expect(batchCostUsd(pricing, u)).toBeCloseTo(0.002, 12);
    expect(
      finishedBatchUsage({ status: 'cancelled', usage: { input_tokens: 3, output_tokens: 0 } }),
    ).toMatchObject({
      prompt_tokens: 3,
    });
  });

  it('believes a finished batch’s counts only up to what its requests could use', () => {
    const pricing = { inputPerMillionTokens: 1, outputPerMillionTokens: 2 };
    const absurd = { input_tokens: 1e300, output_tokens: 5 };
    // Ten requests to a deployment with a 128k window: at most 1.28 M tokens each way.
    const ten = finishedBatchUsage(
      { status: 'completed', request_counts: { total: 10 }, usage: absurd },
      { contextWindow: 128_000 },
    )!;
    expect(ten).toMatchObject({ prompt_tokens: 1_280_000, completion_tokens: 5 });
    expect(batchCostUsd(pricing, ten)).toBeCloseTo(1.28001, 9);
    // No count of requests, no window: the largest batch at the largest window.
    const unknown = finishedBatchUsage({ status: 'completed', usage: absurd })!;
    expect(unknown.prompt_tokens).toBe(MAX_BATCH_REQUESTS * MAX_TOKENS_PER_BATCH_REQUEST);
    expect(batchCostUsd(pricing, unknown)).toBeLessThan(1e6);
    // A bogus count of requests is no count.
    expect(
      finishedBatchUsage({ status: 'completed', request_counts: { total: 1e12 }, usage: absurd })!
        .prompt_tokens,
    ).toBe(MAX_BATCH_REQUESTS * MAX_TOKENS_PER_BATCH_REQUEST);
  });

  it('bounds a batch by every body as input and each max output (or the default) times n', () => {
    const lines = [
      {
        custom_id: 'a',
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'm', max_tokens: 100, n: 2 },
      },
      { custom_id: 'b', method: 'POST', url: '/v1/chat/completions', body: { model: 'm' } },
      { custom_id: 'c', method: 'POST', url: '/v1/embeddings', body: { model: 'm', input: 'x' } },
    ];
    const input = readBatchInput(lines.map((l) => JSON.stringify(l)).join('\n'));
    const pricing = { inputPerMillionTokens: 1, outputPerMillionTokens: 1 };
    // 10 input tokens (the counter), 200 + 1000 output tokens; the embedding line has none.
    expect(batchEstimateUsd(input, pricing, 1000, () => 10)).toBeCloseTo(0.00121, 12);
    expect(batchEstimateUsd(input, undefined, 1000, () => 10)).toBe(0);
  });
});
