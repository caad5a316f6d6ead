/**
 * A key that has spent its whole budget can still read and download what it paid for: reads
 * cost nothing, so they take the rate limit and no budget hold (a $0 hold is refused at $0
 * left). Anything priced is still refused.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-spent-reads';
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
        capabilities: ['chat', 'files'],
      }),
      tenant('acme'),
      apiKey('spent', KEY, 'acme', { budget: BUDGET, rateLimit: { requestsPerMinute: 100 } }),
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
});
