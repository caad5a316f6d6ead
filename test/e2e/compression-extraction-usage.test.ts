/**
 * The extraction call's usage is the upstream's word like an answer's: a corrupt report is cut
 * at the call's `max_tokens` (it charged 1e9 output tokens, $600 at $0.6/M, against a $0.0012
 * hold), and a missing one bills the gateway's own count (it charged $0). The extractor here
 * is a raw HTTP server the test scripts; the answer comes from the fake provider.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentTrace } from '../../dataplane/src/pipeline/compression/fixtures.ts';
import { TUNING } from '../../dataplane/src/pipeline/compression/profile.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const BUDGET = { limitUsd: 100, period: 'total' as const };
const XPRICE = { inputPerMillionTokens: 10, outputPerMillionTokens: 10 };
const H = 'x-gantrystate-';
const MOST_STATE_TOKENS = Math.max(...Object.values(TUNING).map((t) => t.stateBudgetTokens));

/** The extractor's next usage report (undefined: none). */
let reported: unknown;
let raw: Server;
let stack: Stack;

beforeAll(async () => {
  raw = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-x',
          object: 'chat.completion',
          created: 1,
          model: 'extractor',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: '{"intent":"finish the task","active_constraints":[]}' },
              finish_reason: 'stop',
            },
          ],
          ...(reported !== undefined && { usage: reported }),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'chat',
        model: 'chat',
        baseUrl: fakeBase(url!),
        pricing: { inputPerMillionTokens: 0.1, outputPerMillionTokens: 0.2 },
        capabilities: ['chat', 'tools'],
      }),
      deployment({ name: 'extractor', model: 'extractor', baseUrl: fakeBase(rawUrl), pricing: XPRICE }),
      tenant('acme', ['*'], { compression: { enabled: true, extractionModel: 'extractor' } }),
      apiKey('k', 'sk-xusage', 'acme', { budget: BUDGET }),
    ].join(''),
  );
});
afterAll(async () => {
  await stack.close();
  await new Promise((resolve) => raw.close(resolve));
});

/** One long request; what the extraction was billed (tokens, and $ as the budget saw it). */
async function extraction(): Promise<{ prompt: number; completion: number; usd: number }> {
  const spent = async () =>
    (await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/k' }, BUDGET)).spentUsd;
  const before = await spent();
  const g = agentTrace(11, 16);
  const client = new OpenAI({ baseURL: stack.baseURL, apiKey: 'sk-xusage', maxRetries: 0 });
  const { response } = await client.chat.completions
    .create({
      model: 'chat',
      max_tokens: 200,
      messages: g.request.messages,
      tools: g.request.tools,
    } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming)
    .withResponse();
  // Made and answered (whether its state parses or not, the call is charged).
  expect(response.headers.get(`${H}fallback`) ?? 'none').not.toMatch(/not_needed|no_model/);
  const answer = Number(response.headers.get('x-gantry-cost'));
  return {
    prompt: Number(response.headers.get(`${H}extraction-prompt-tokens`)),
    completion: Number(response.headers.get(`${H}extraction-completion-tokens`)),
    usd: (await spent()) - before - answer,
  };
}

describe('the extraction charge', () => {
  it('cuts a corrupt output count at the call max_tokens', async () => {
    reported = { prompt_tokens: 4000, completion_tokens: 1_000_000_000 };
    const x = await extraction();
    expect(x.prompt).toBe(4000);
    expect(x.completion).toBeGreaterThan(0);
    expect(x.completion).toBeLessThanOrEqual(MOST_STATE_TOKENS);
    expect(x.usd).toBeCloseTo(((4000 + x.completion) * 10) / 1e6, 6);
  });

  it('bills the gateway count when the extractor reports no usage', async () => {
    reported = undefined;
    const x = await extraction();
    expect(x.prompt).toBeGreaterThan(1000);
    expect(x.completion).toBeGreaterThan(0);
    expect(x.usd).toBeGreaterThan(0.01);
  });
});
