/** `POST /v1/rerank` over raw HTTP: proxied to rerank deployments, charged per search. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeRelevance } from '../../dataplane/src/fake-provider/openai-extra.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-rerank';
const POOR_KEY = 'sk-rerank-poor';
const OTHER_KEY = 'sk-rerank-other';
const FEW_SEARCH_KEY = 'sk-rerank-few-searches';
/** Room for a few searches (and their tokens), not for ten. */
const FEW_SEARCH_BUDGET = { limitUsd: 0.01, period: 'monthly' as const };
const PER_SEARCH = 0.002;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!), capabilities: ['chat'] }),
      deployment({
        name: 'ranker',
        model: 'rerank-test',
        provider: 'openai-compatible',
        upstreamModel: 'bge-reranker',
        baseUrl: fakeBase(url!),
        capabilities: ['rerank'],
        extra: { pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 0, perSearch: PER_SEARCH } },
      }),
      tenant('acme'),
      tenant('globex', ['gpt-test']),
      apiKey('acme-key', KEY, 'acme', { budget: { limitUsd: 10, period: 'monthly' } }),
      apiKey('poor-key', POOR_KEY, 'acme', { budget: { limitUsd: PER_SEARCH / 2, period: 'monthly' } }),
      apiKey('globex-key', OTHER_KEY, 'globex'),
      apiKey('few-search-key', FEW_SEARCH_KEY, 'acme', { budget: FEW_SEARCH_BUDGET }),
    ].join(''),
  );
});
afterAll(() => stack.close());

const rerank = (body: unknown, key = KEY) =>
  fetch(`${stack.baseURL}/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const documents = ['Paris is the capital of France', 'Bananas are yellow', 'The capital of Spain is Madrid'];

interface RerankBody {
  model: string;
  results: { index: number; relevance_score: number; document?: { text: string } }[];
  meta: { billed_units: { search_units: number } };
  usage: { total_tokens: number };
}

describe('rerank', () => {
  it('ranks best first, cut to top_n, with documents when asked, charged per search plus tokens', async () => {
    stack.fakes[0]!.reset();
    const query = 'capital of France';
    const res = await rerank({ model: 'rerank-test', query, documents, top_n: 2, return_documents: true });
    expect(res.status).toBe(200);
    const body = (await res.json()) as RerankBody;
    expect(body.model).toBe('rerank-test');
    expect(body.results).toEqual([
      { index: 0, relevance_score: fakeRelevance(query, documents[0]!), document: { text: documents[0] } },
      { index: 2, relevance_score: fakeRelevance(query, documents[2]!), document: { text: documents[2] } },
    ]);
    expect(body.meta.billed_units.search_units).toBe(1);
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/rerank');
    expect(sent.body).toMatchObject({ model: 'bge-reranker', query, top_n: 2 });
    const cost = Number(res.headers.get('x-gantry-cost'));
    expect(cost).toBeCloseTo(PER_SEARCH + body.usage.total_tokens / 1e6, 9);
    expect(res.headers.get('x-gantry-provider')).toBe('ranker');
    const record = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'rerank', deployment: 'ranker', costUsd: cost });
  });

  it('accepts {text} documents and leaves documents out unless asked', async () => {
    const res = await rerank({
      model: 'rerank-test',
      query: 'yellow',
      documents: documents.map((text) => ({ text })),
    });
    const body = (await res.json()) as RerankBody;
    expect(body.results.map((r) => r.index)).toEqual([1, 0, 2]);
    expect(body.results[0]?.document).toBeUndefined();
  });

  it('holds the per-search price in the budget: a key that cannot afford one search is refused', async () => {
    const res = await rerank({ model: 'rerank-test', query: 'q', documents }, POOR_KEY);
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('budget_exceeded');
  });

  it('holds one search per 100 documents, as providers bill: a key with room for a few cannot rank 1,000', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `doc ${i}`);
    const spent = async () =>
      (
        await stack.gateway.stores.budgets.state(
          { tenant: 'acme', keyId: 'default/few-search-key' },
          FEW_SEARCH_BUDGET,
        )
      ).spentUsd;
    const calls = stack.fakes[0]!.requests.length;
    const refused = await rerank(
      { model: 'rerank-test', query: 'q', documents: many(1_000) },
      FEW_SEARCH_KEY,
    );
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('budget_exceeded');
    expect(stack.fakes[0]!.requests.length).toBe(calls);
    expect(await spent()).toBe(0);
    const fits = await rerank({ model: 'rerank-test', query: 'q', documents: many(150) }, FEW_SEARCH_KEY);
    expect(fits.status).toBe(200);
    expect(((await fits.json()) as RerankBody).meta.billed_units.search_units).toBe(2);
    expect(await spent()).toBeCloseTo(Number(fits.headers.get('x-gantry-cost')), 9);
    expect(await spent()).toBeLessThanOrEqual(FEW_SEARCH_BUDGET.limitUsd);
  });

  it('refuses a model without the capability, another tenant, and malformed input, naming the field', async () => {
    const chat = await rerank({ model: 'gpt-test', query: 'q', documents });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as { error: { message: string } }).error.message).toContain('/v1/rerank');
    expect((await rerank({ model: 'rerank-test', query: 'q', documents }, OTHER_KEY)).status).toBe(404);
    const empty = await rerank({ model: 'rerank-test', query: 'q', documents: [] });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { message: string } }).error.message).toContain('documents');
    const noQuery = await rerank({ model: 'rerank-test', documents });
    expect(((await noQuery.json()) as { error: { message: string } }).error.message).toContain('query');
  });
});
