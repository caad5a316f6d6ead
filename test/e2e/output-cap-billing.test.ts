/**
 * An answer stopped by the caller's output cap is billed exactly the cap's output tokens: the
 * fake provider stops at `max_tokens` as real providers do, in every wire format, and the
 * gateway maps each format's stop (`length`, Anthropic `max_tokens`, Gemini `MAX_TOKENS`) to
 * OpenAI's `length` and charges, logs and sums the cut answer's tokens, no more.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costUsd } from '../../dataplane/src/accounting/cost.ts';
import { countTokens, cutToCap, fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const KEY = 'sk-output-cap';
const ADMIN = 'sk-output-cap-admin';
const PRICE = { inputPerMillionTokens: 3_000, outputPerMillionTokens: 7_000 };
const CAP = 5;

let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'gpt-cap', model: 'gpt-cap', baseUrl: fakeBase(url!), pricing: PRICE }),
      deployment({
        name: 'claude-cap',
        model: 'claude-cap',
        provider: 'anthropic',
        baseUrl: fakeBase(url!, 'anthropic'),
        pricing: PRICE,
      }),
      deployment({
        name: 'gemini-cap',
        model: 'gemini-cap',
        provider: 'gemini',
        baseUrl: fakeBase(url!, 'gemini'),
        pricing: PRICE,
      }),
      tenant('acme'),
      apiKey('user-key', KEY, 'acme'),
      apiKey('admin-key', ADMIN, 'acme', { role: 'admin' }),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

interface LogEntry {
  id: string;
  key_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

/** The request log line of one request, as the tenant's admin reads it (written as the answer goes out). */
function logOf(id: string | null): Promise<LogEntry> {
  return until(`the log entry of ${String(id)}`, async () => {
    const res = await fetch(`${stack.gateway.url}/api/analytics/usage/logs?limit=100`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const body = (await res.json()) as { data: LogEntry[] };
    return body.data.find((e) => e.id === id);
  });
}

const question = (model: string, stream: boolean): string =>
  `Explain tides, asked of ${model}, stream ${stream}`;
const billed: LogEntry[] = [];

describe('an answer cut at max_tokens', () => {
  it.each([
    ['gpt-cap', false],
    ['gpt-cap', true],
    ['claude-cap', false],
    ['claude-cap', true],
    ['gemini-cap', false],
    ['gemini-cap', true],
  ])('from %s (stream %s) says length and is billed exactly the cap', async (model, stream) => {
    const q = question(model, stream);
    const expected = cutToCap(fakeAnswer(q), CAP).text;
    expect(countTokens(fakeAnswer(q))).toBeGreaterThan(CAP);
    let text: string;
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    let id: string | null;
    const messages = [{ role: 'user' as const, content: q }];
    if (stream) {
      const { data, response } = await client.chat.completions
        .create({ model, max_tokens: CAP, messages, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      id = response.headers.get('x-gantry-request-id');
      text = '';
      for await (const chunk of data) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
    } else {
      const { data, response } = await client.chat.completions
        .create({ model, max_tokens: CAP, messages })
        .withResponse();
      id = response.headers.get('x-gantry-request-id');
      text = data.choices[0]?.message.content ?? '';
      finish = data.choices[0]?.finish_reason;
      usage = data.usage;
    }
    expect(text).toBe(expected);
    expect(finish).toBe('length');
    expect(usage?.completion_tokens).toBe(CAP);
    const log = await logOf(id);
    expect(log.key_id).toBe('default/user-key');
    expect(log.completion_tokens).toBe(CAP);
    expect(log.prompt_tokens).toBe(usage?.prompt_tokens);
    expect(log.cost_usd).toBe(costUsd(PRICE, { prompt_tokens: log.prompt_tokens, completion_tokens: CAP }));
    billed.push(log);
  });

  it('through the Responses API: status incomplete for max_output_tokens, billed the cap', async () => {
    const q = question('responses', false);
    const { data, response } = await client.responses
      .create({ model: 'gpt-cap', input: q, max_output_tokens: 16 })
      .withResponse();
    expect(data.status).toBe('incomplete');
    expect(data.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(data.output_text).toBe(cutToCap(fakeAnswer(q), 16).text);
    expect(data.usage?.output_tokens).toBe(16);
    const log = await logOf(response.headers.get('x-gantry-request-id'));
    expect(log.completion_tokens).toBe(16);
    expect(log.cost_usd).toBe(costUsd(PRICE, { prompt_tokens: log.prompt_tokens, completion_tokens: 16 }));
    billed.push(log);
  });

  it('asked in the Anthropic and Gemini formats of an OpenAI upstream: max_tokens and MAX_TOKENS', async () => {
    const ids: (string | null)[] = [];
    const post = async (path: string, body: unknown): Promise<Response> => {
      const res = await fetch(`${stack.gateway.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      ids.push(res.headers.get('x-gantry-request-id'));
      return res;
    };
    const q = question('formats', false);
    const messages = [{ role: 'user', content: q }];
    const msg = (await (
      await post('/v1/messages', { model: 'gpt-cap', max_tokens: CAP, messages })
    ).json()) as {
      stop_reason: string;
      content: { text: string }[];
      usage: { output_tokens: number };
    };
    expect(msg.stop_reason).toBe('max_tokens');
    expect(msg.content[0]?.text).toBe(cutToCap(fakeAnswer(q), CAP).text);
    expect(msg.usage.output_tokens).toBe(CAP);
    const streamed = await (
      await post('/v1/messages', { model: 'gpt-cap', max_tokens: CAP, messages, stream: true })
    ).text();
    expect(streamed).toMatch(/"stop_reason":"max_tokens"/);
    const gemini = (await (
      await post('/v1/models/gpt-cap:generateContent', {
        contents: [{ role: 'user', parts: [{ text: q }] }],
        generationConfig: { maxOutputTokens: CAP },
      })
    ).json()) as { candidates: { finishReason: string }[]; usageMetadata: { candidatesTokenCount: number } };
    expect(gemini.candidates[0]?.finishReason).toBe('MAX_TOKENS');
    expect(gemini.usageMetadata.candidatesTokenCount).toBe(CAP);
    for (const id of ids) {
      const log = await logOf(id);
      expect(log.completion_tokens).toBe(CAP);
      billed.push(log);
    }
  });

  it("sums to the key's analytics totals: the cut tokens and their cost, nothing more", async () => {
    expect(billed).toHaveLength(10);
    type Totals = { requests: number; tokens: { completion: number }; spend_usd: number };
    // Rollups are written as the answers go out, like the log: wait until all ten are in.
    const totals = await until('the key’s totals', async () => {
      const res = await fetch(
        `${stack.gateway.url}/api/analytics/usage-overview?tenant_id=acme&key=default/user-key`,
        { headers: { authorization: `Bearer ${ADMIN}` } },
      );
      const t = ((await res.json()) as { totals: Totals }).totals;
      return t.requests >= 10 ? t : undefined;
    });
    expect(totals.requests).toBe(10);
    expect(totals.tokens.completion).toBe(9 * CAP + 16);
    const micros = billed.reduce((n, l) => n + Math.round(l.cost_usd * 1e6), 0);
    expect(Math.round(totals.spend_usd * 1e6)).toBe(micros);
  });
});
