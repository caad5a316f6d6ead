/**
 * A POST that creates something kept upstream (here a file, and an assistant) is not
 * repeated on another deployment once an attempt may have created it (a 500, a timeout):
 * the copy would be orphaned upstream, unknown to its owner, and a batch or job would run
 * and be billed twice. The caller gets the error, saying the object may exist. Failures that
 * prove nothing was created (503, 429, a refused connection) still fail over. Driven with the
 * official openai client against fake providers.
 */
import { createServer } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import type { Fault } from '../../dataplane/src/fake-provider/types.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-create-once';
const CAPS = ['chat', 'files', 'assistants'];
let stack: Stack;
let client: OpenAI;
/** The SDK as most callers use it: it retries a 502/504 twice on its own unless told not to. */
let retrying: OpenAI;
const A = () => stack.fakes[0]!;
const B = () => stack.fakes[1]!;

/** A loopback port nothing listens on: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  const refused = `http://127.0.0.1:${await closedPort()}/v1`;
  stack = await startStack(
    ([a, b]) =>
      [
        deployment({
          name: 'st-a',
          model: 'store',
          baseUrl: fakeBase(a!),
          priority: 1,
          timeoutMs: 400,
          capabilities: CAPS,
        }),
        deployment({ name: 'st-b', model: 'store', baseUrl: fakeBase(b!), priority: 2, capabilities: CAPS }),
        deployment({ name: 'rf-a', model: 'refusing', baseUrl: refused, priority: 1, capabilities: CAPS }),
        deployment({
          name: 'rf-b',
          model: 'refusing',
          baseUrl: fakeBase(b!),
          priority: 2,
          capabilities: CAPS,
        }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { fakes: 2 },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  retrying = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY });
});
afterAll(() => stack.close());
beforeEach(() => {
  for (const f of stack.fakes) f.reset();
  stack.gateway.health.reset();
});

const posts = (fake: FakeProvider, path: string) =>
  fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith(path)).length;

const upload = async (model: string, sdk: OpenAI = client) =>
  sdk.files
    .create(
      { file: await toFile(Buffer.from('notes for the gateway'), 'notes.txt'), purpose: 'assistants' },
      { headers: { 'x-gantry-model': model } },
    )
    .withResponse();

const failFirst = (fault: Fault, path = '/files') => A().setFaults([{ match: { path }, fault, times: 1 }]);

describe('a create whose outcome is unknown is not repeated', () => {
  it.each([
    ['a 500', { type: 'status', status: 500 } as Fault, 502],
    ['a timeout after sending', { type: 'hang' } as Fault, 504],
  ])(
    'file upload answered by %s: the caller is told, the other deployment is not asked',
    async (_n, fault, status) => {
      failFirst(fault);
      const err = (await upload('store').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBe(status);
      expect(err.message).toMatch(/may have created the object/);
      expect(err.headers?.get('x-gantry-failed')).toBe('st-a');
      expect(err.headers?.get('x-should-retry')).toBe('false');
      expect(posts(A(), '/files')).toBe(1);
      expect(posts(B(), '/files')).toBe(0);
    },
  );

  it.each([
    ['a 500', { type: 'status', status: 500 } as Fault, 502],
    ['a timeout after sending', { type: 'hang' } as Fault, 504],
  ])(
    'answered by %s, the SDK with its default retries does not make it again either',
    async (_n, fault, status) => {
      failFirst(fault);
      const err = (await upload('store', retrying).catch((e: unknown) => e)) as InstanceType<
        typeof OpenAI.APIError
      >;
      expect(err.status).toBe(status);
      expect(err.message).toMatch(/may have created the object/);
      expect(posts(A(), '/files') + posts(B(), '/files')).toBe(1);
    },
  );

  it('an assistant create answered by a 500 is not repeated either', async () => {
    failFirst({ type: 'status', status: 500 }, '/assistants');
    const err = (await client.beta.assistants
      .create({ model: 'store', name: 'helper' })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(502);
    expect(err.message).toMatch(/may have created the object/);
    expect(posts(B(), '/assistants')).toBe(0);
  });
});

describe('a create refused before anything was made still fails over', () => {
  it.each([
    ['a 503', { type: 'status', status: 503 } as Fault],
    ['a 429', { type: 'status', status: 429 } as Fault],
  ])('file upload refused with %s: created once, on the next deployment', async (_n, fault) => {
    failFirst(fault);
    const { data, response } = await upload('store');
    expect(data.id).toMatch(/^file-/);
    expect(response.headers.get('x-gantry-provider')).toBe('st-b');
    expect(posts(A(), '/files')).toBe(1);
    expect(posts(B(), '/files')).toBe(1);
  });

  it('a refused connection: created once, on the next deployment', async () => {
    const { response } = await upload('refusing');
    expect(response.headers.get('x-gantry-provider')).toBe('rf-b');
    expect(response.headers.get('x-gantry-failed')).toBe('rf-a');
    expect(posts(B(), '/files')).toBe(1);
  });
});
