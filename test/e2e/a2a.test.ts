/**
 * `POST /v1/a2a/{agent}/message/send` over raw HTTP: JSON-RPC forwarded to a configured
 * agent, guarded, charged per call, and tasks kept to the tenant and key that created them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_AGENT_FAIL_WORD, fakeAgentReply } from '../../dataplane/src/fake-provider/agents.ts';
import { apiKey, deployment, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-a2a';
const SAME_TENANT_KEY = 'sk-a2a-2';
const OTHER_TENANT_KEY = 'sk-a2a-other';
const LIMITED_KEY = 'sk-a2a-limited';
const SLOW_KEY = 'sk-a2a-slow';
const PER_REQUEST = 0.01;
// Assembled at run time so secret scanners do not flag this file.
const AWS_KEY = ['AKIA', 'Z7Q3XK2M', '4N5P6R7T'].join('');
const BUDGET = { limitUsd: 5, period: 'monthly' as const };
let stack: Stack;
let chargedMicros = 0;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'travel-agent',
        model: 'travel',
        provider: 'openai-compatible',
        upstreamModel: 'travel',
        baseUrl: `${url!}/a2a/travel`,
        capabilities: ['a2a'],
        extra: { pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perRequest: PER_REQUEST } },
      }),
      // One agent served by two deployments: what failover may do to a message.
      ...['twin-a', 'twin-b'].map((name, i) =>
        deployment({
          name,
          model: 'twin',
          provider: 'openai-compatible',
          upstreamModel: 'twin',
          baseUrl: `${url!}/a2a/twin`,
          priority: i + 1,
          capabilities: ['a2a'],
        }),
      ),
      deployment({ name: 'chat', model: 'gpt-test', baseUrl: `${url!}/v1` }),
      manifest('GuardrailPolicy', 'strict', {
        pii: { action: 'redact', entities: ['EMAIL'] },
        secrets: { action: 'block' },
        scanResponses: false,
      }),
      tenant('acme', ['*'], { guardrails: { policyRef: { name: 'strict' } } }),
      tenant('globex'),
      apiKey('a2a', KEY, 'acme', { budget: BUDGET }),
      apiKey('a2a-2', SAME_TENANT_KEY, 'acme'),
      apiKey('a2a-limited', LIMITED_KEY, 'acme', { models: ['gpt-test'] }),
      apiKey('a2a-slow', SLOW_KEY, 'acme', { rateLimit: { requestsPerMinute: 1 } }),
      apiKey('globex', OTHER_TENANT_KEY, 'globex'),
    ].join(''),
  );
});
afterAll(() => stack.close());

interface RpcAnswer {
  jsonrpc: string;
  id: unknown;
  result?: { kind: string; id: string; contextId: string; artifacts: { parts: { text: string }[] }[] };
  error?: { code: number; message: string };
}

async function send(body: unknown, key = KEY, agent = 'travel') {
  const res = await fetch(`${stack.baseURL}/a2a/${agent}/message/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (key === KEY) chargedMicros += Math.round(Number(res.headers.get('x-gantry-cost') ?? 0) * 1e6);
  return { res, json: (await res.json()) as RpcAnswer & { error?: { type?: string } } };
}

const call = (text: string, extra: Record<string, unknown> = {}, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'message/send',
  params: {
    message: { role: 'user', messageId: `m-${text.length}`, parts: [{ kind: 'text', text }], ...extra },
  },
});

let task: { id: string; contextId: string };

describe('a2a message/send', () => {
  it('forwards the JSON-RPC call to the agent and returns its task, charged per call', async () => {
    stack.fakes[0]!.reset();
    const { res, json } = await send(call('book a flight to Lisbon'), KEY);
    expect(res.status).toBe(200);
    expect(json).toMatchObject({ jsonrpc: '2.0', id: 1, result: { kind: 'task' } });
    expect(json.result!.artifacts[0]!.parts[0]!.text).toBe(fakeAgentReply('book a flight to Lisbon'));
    task = { id: json.result!.id, contextId: json.result!.contextId };
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/a2a/travel');
    expect(sent.body).toMatchObject({ method: 'message/send', id: 1 });
    const cost = Number(res.headers.get('x-gantry-cost'));
    expect(cost).toBeCloseTo(PER_REQUEST, 9);
    expect(res.headers.get('x-gantry-provider')).toBe('travel-agent');
    const record = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'a2a', deployment: 'travel-agent', costUsd: cost });
  });

  it('lets the owner continue its task, and no other key or tenant (task not found)', async () => {
    const own = await send(call('and a hotel', { taskId: task.id, contextId: task.contextId }), KEY);
    expect(own.json.result?.id).toBe(task.id);
    for (const key of [SAME_TENANT_KEY, OTHER_TENANT_KEY]) {
      const before = stack.fakes[0]!.requests.length;
      const other = await send(call('and a hotel', { taskId: task.id }), key);
      expect(other.res.status).toBe(200);
      expect(other.json).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32001 } });
      expect(other.res.headers.get('x-gantry-cost')).toBeNull();
      // Refused before the agent is called, and recorded as the refusal it is.
      expect(stack.fakes[0]!.requests.length).toBe(before);
      const tenantName = key === OTHER_TENANT_KEY ? 'globex' : 'acme';
      const record = await usageRecord(stack, tenantName, other.res.headers.get('x-gantry-request-id'));
      expect(record).toMatchObject({ endpoint: 'a2a', status: 404, costUsd: 0, requestedModel: 'travel' });
    }
    const ctxOther = await send(call('hi', { contextId: task.contextId }), OTHER_TENANT_KEY);
    expect(ctxOther.json.error?.code).toBe(-32001);
    // An id no agent answer gave this key is nobody's: it cannot be used to guess others'.
    const made = await send(call('hi', { contextId: 'ctx-made-up' }), KEY);
    expect(made.json.error?.code).toBe(-32001);
  });

  it('redacts PII in text parts and blocks secrets before the agent sees them', async () => {
    await send(call('mail me at jane.doe@example.com'));
    const sent = stack.fakes[0]!.requests.at(-1)!.body as {
      params: { message: { parts: { text: string }[] } };
    };
    expect(sent.params.message.parts[0]!.text).not.toContain('jane.doe@example.com');
    const blocked = await send(call(`AWS_ACCESS_KEY_ID=${AWS_KEY}`));
    expect(blocked.res.status).toBe(403);
    expect(blocked.json.error?.type).toBe('guardrail_blocked');
  });

  it('answers malformed calls the JSON-RPC way and charges nothing', async () => {
    const cases: [unknown, number][] = [
      [{ jsonrpc: '1.0', id: 7, method: 'message/send', params: {} }, -32600],
      [{ ...call('x', {}, 8), method: 'tasks/cancel' }, -32601],
      [
        { jsonrpc: '2.0', id: 9, method: 'message/send', params: { message: { role: 'user', parts: [] } } },
        -32602,
      ],
      [call('x', { parts: [{ kind: 'video' }] }, 10), -32602],
      [call('x', { parts: Array.from({ length: 300 }, () => ({ kind: 'text', text: 'a' })) }, 11), -32602],
    ];
    for (const [body, code] of cases) {
      const { res, json } = await send(body);
      expect(res.status).toBe(200);
      expect(json.error?.code).toBe(code);
      expect(json.id).toBe((body as { id: unknown }).id);
    }
  });

  it('refuses an oversized referenceTaskIds list as invalid params, before any lookup', async () => {
    const { res, json } = await send(call('x', { referenceTaskIds: Array(300_000).fill(task.id) }, 12));
    expect(res.status).toBe(200);
    expect(json.error?.code).toBe(-32602);
    expect(json.error?.message).toContain('params.message.referenceTaskIds');
    expect(json.error?.message).toContain('at most 64');
    const own = await send(call('and a car', { taskId: task.id, referenceTaskIds: Array(64).fill(task.id) }));
    expect(own.json.result?.id).toBe(task.id);
  });

  it('rate-limits a call before looking up the tasks it references', async () => {
    const first = await send(call('x', { referenceTaskIds: ['made-up'] }), SLOW_KEY);
    expect(first.json.error?.code).toBe(-32001);
    // The key's one request this minute was spent on the refused call: the next is a 429,
    // whatever it references.
    const second = await send(call('x', { referenceTaskIds: ['made-up'] }), SLOW_KEY);
    expect(second.res.status).toBe(429);
  });

  it('refuses hostile bodies before the agent: deep nesting (400) and non-JSON (400)', async () => {
    let nested: unknown = 'x';
    for (let i = 0; i < 200; i++) nested = { deeper: nested };
    const before = stack.fakes[0]!.requests.length;
    const deep = await send(call('x', { parts: [{ kind: 'data', data: nested }] }));
    expect(deep.res.status).toBe(400);
    expect(deep.json.error?.message).toContain('nesting depth');
    const res = await fetch(`${stack.baseURL}/a2a/travel/message/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"jsonrpc": "2.0", "id": 1,',
    });
    expect(res.status).toBe(400);
    expect(stack.fakes[0]!.requests.length).toBe(before);
  });

  it('passes an agent JSON-RPC error through uncharged', async () => {
    const { res, json } = await send(call(`please ${FAKE_AGENT_FAIL_WORD}`));
    expect(json.error?.code).toBe(-32603);
    expect(Number(res.headers.get('x-gantry-cost'))).toBe(0);
  });

  it('refuses an unknown agent, a plain model and an agent the key may not use with a 404', async () => {
    expect((await send(call('x'), KEY, 'nobody')).res.status).toBe(404);
    expect((await send(call('x'), KEY, 'gpt-test')).res.status).toBe(404);
    expect((await send(call('x'), LIMITED_KEY)).res.status).toBe(404);
  });

  it("the key's budget spend is the sum of the charged costs", async () => {
    const state = await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/a2a' }, BUDGET);
    expect(Math.round(state.spentUsd * 1e6)).toBe(chargedMicros);
    // Three task calls and the redacted one; refusals and the agent's own error are free.
    expect(chargedMicros).toBe(Math.round(4 * PER_REQUEST * 1e6));
  });
});

describe('a message whose outcome is unknown', () => {
  it('is not sent again to another deployment of the agent, and the SDKs are told not to repeat it', async () => {
    const fake = stack.fakes[0]!;
    fake.reset();
    fake.setFaults([{ match: { path: '/a2a/twin' }, fault: { type: 'status', status: 500 }, times: 1 }]);
    const { res } = await send(call('book the flight'), SAME_TENANT_KEY, 'twin');
    expect(res.status).toBe(502);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(res.headers.get('x-gantry-failed')).toBe('twin-a');
    expect(fake.requests.filter((r) => r.path === '/a2a/twin')).toHaveLength(1);
  });
});
