/**
 * A cache hit meets this request's response guardrails whether it is served whole or replayed
 * as a stream: with `scanResponses` and PII redaction, the stored answer's email reaches the
 * client as a placeholder both ways. The answer is a JSON-schema reply whose enum value is the
 * email, so the prompt itself carries no PII for the request-side check to change.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';

const EMAIL = 'jane.doe@example.org';

describe('a streamed cache hit replays the guarded answer', () => {
  let stack: Stack;
  const fake = () => stack.fakes[0]!;
  const chatCalls = () => fake().requests.filter((r) => r.path.includes('/chat/completions')).length;

  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({ name: 'chat', model: 'm', baseUrl: fakeBase(url!) }),
          manifest('GuardrailPolicy', 'scrub', {
            pii: { action: 'redact', entities: ['EMAIL'] },
            scanResponses: true,
          }),
          tenant('acme', ['*'], { cache: { enabled: true }, guardrails: { policyRef: { name: 'scrub' } } }),
          apiKey('k', 'sk-guarded-replay', 'acme'),
        ].join(''),
      { env: { FAKE_PROVIDER_KEY: 'sk-fake' } },
    );
  });
  afterAll(() => stack.close());
  beforeEach(() => fake().reset());

  const params = {
    model: 'm',
    messages: [{ role: 'user' as const, content: 'Who is the support contact for the billing team?' }],
    response_format: {
      type: 'json_schema' as const,
      json_schema: {
        name: 'contact',
        schema: {
          type: 'object',
          required: ['contact'],
          properties: { contact: { type: 'string', enum: [EMAIL] } },
        },
      },
    },
  };
  const client = () => new OpenAI({ baseURL: stack.baseURL, apiKey: 'sk-guarded-replay', maxRetries: 0 });
  const streamed = async () => {
    const { data, response } = await client()
      .chat.completions.create({ ...params, stream: true })
      .withResponse();
    let text = '';
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
    return { text, status: response.headers.get('x-gantrycache-status') };
  };

  it('redacts a stored answer on a streamed hit as on a non-streamed one', async () => {
    // A live stream is not scanned (README): the miss relays, and stores, the email as is.
    const miss = await streamed();
    expect(miss.status).toBe('MISS');
    expect(miss.text).toContain(EMAIL);

    const whole = await client().chat.completions.create(params).withResponse();
    expect(whole.response.headers.get('x-gantrycache-status')).toBe('DIRECT');
    expect(whole.data.choices[0]?.message.content).not.toContain(EMAIL);
    expect(whole.data.choices[0]?.message.content).toContain('[EMAIL_1]');

    const hit = await streamed();
    expect(hit.status).toBe('DIRECT');
    expect(hit.text).toBe(whole.data.choices[0]?.message.content);
    expect(chatCalls()).toBe(1);
  });
});
