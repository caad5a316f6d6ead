/**
 * A key that has spent its whole budget can still read and download what it paid for: reads
 * cost nothing, so they take the rate limit and no budget hold (a $0 hold is refused at $0
 * left). Anything priced is still refused.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-spent-reads';
const STORES_KEY = 'sk-spent-reads-stores';
/** Exactly one 4-second clip at $0.10 a second. */
const BUDGET = { limitUsd: 0.4, period: 'monthly' as const };

let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'sora',
        model: 'sora',
        baseUrl: fakeBase(url!),
        capabilities: ['video'],
        extra: { pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perSecond: 0.1 } },
      }),
      deployment({
        name: 'holder',
        model: 'holder',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'files', 'vector_stores', 'assistants', 'containers'],
      }),
      tenant('acme'),
      apiKey('spent', KEY, 'acme', { budget: BUDGET, rateLimit: { requestsPerMinute: 100 } }),
      apiKey('stores', STORES_KEY, 'acme', { budget: BUDGET }),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const get = (path: string) =>
  fetch(`${stack.baseURL}${path}`, { headers: { authorization: `Bearer ${KEY}` } });

describe('a key with nothing left of its budget', () => {
  it('still reads and downloads its video and its files, and is refused anything priced', async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from('notes'), 'n.txt'),
      purpose: 'user_data',
    });
    const created = await fetch(`${stack.baseURL}/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora', prompt: 'waves', seconds: '4' }),
    });
    expect(created.status).toBe(200);
    const video = ((await created.json()) as { id: string }).id;
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/spent' },
      BUDGET,
    );
    expect(state.spentUsd).toBeCloseTo(BUDGET.limitUsd, 9);

    const reads = [
      `/videos/${video}`,
      `/videos/${video}/content`,
      `/files/${file.id}`,
      `/files/${file.id}/content`,
      '/files',
    ];
    const statuses: number[] = [];
    for (const path of reads) {
      const res = await get(path);
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    // Still counted by the rate limit.
    expect((await get(`/videos/${video}`)).headers.get('x-ratelimit-remaining-requests')).toBe('92');

    const priced = await fetch(`${stack.baseURL}/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora', prompt: 'again', seconds: '1' }),
    });
    expect(priced.status).toBe(402);
  });

  it('still reads its vector stores, assistants and containers and their files, each recorded at $0', async () => {
    const other = new OpenAI({ baseURL: stack.baseURL, apiKey: STORES_KEY, maxRetries: 0 });
    const file = await other.files.create({
      file: await toFile(Buffer.from('notes'), 'n.txt'),
      purpose: 'assistants',
    });
    const store = await other.vectorStores.create({ name: 'kb', file_ids: [file.id] });
    const assistant = await other.beta.assistants.create({ model: 'holder', name: 'helper' });
    const container = await other.containers.create({ name: 'sandbox', file_ids: [file.id] });
    const containerFile = (await other.containers.files.list(container.id)).data[0]!;
    await stack.gateway.stores.budgets.charge({
      tenant: 'acme',
      keyId: 'default/stores',
      budget: BUDGET,
      amountUsd: BUDGET.limitUsd,
      id: 'stores-spend-it-all',
    });
    const reads = [
      '/vector_stores',
      `/vector_stores/${store.id}`,
      `/vector_stores/${store.id}/files`,
      `/vector_stores/${store.id}/files/${file.id}`,
      '/assistants',
      `/assistants/${assistant.id}`,
      '/containers',
      `/containers/${container.id}`,
      `/containers/${container.id}/files`,
      `/containers/${container.id}/files/${containerFile.id}`,
      `/containers/${container.id}/files/${containerFile.id}/content`,
    ];
    const answers: string[] = [];
    for (const path of reads) {
      const res = await fetch(`${stack.baseURL}${path}`, {
        headers: { authorization: `Bearer ${STORES_KEY}`, 'openai-beta': 'assistants=v2' },
      });
      await res.arrayBuffer();
      answers.push(`${path} ${res.status} $${Number(res.headers.get('x-gantry-cost') ?? Number.NaN)}`);
    }
    expect(answers).toEqual(reads.map((path) => `${path} 200 $0`));
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/stores' },
      BUDGET,
    );
    expect(state.spentUsd).toBeCloseTo(BUDGET.limitUsd, 9);
    expect(state.heldUsd).toBe(0);
  });
});
