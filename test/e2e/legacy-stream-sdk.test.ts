/**
 * The official SDK reading a legacy completion stream that the upstream broke mid-line: it must
 * get the gateway's error event as an APIError naming the cause, not a SyntaxError from parsing
 * the cut event (only whole events are piped before the error).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_SSE_BYTES } from '../../dataplane/src/formats/sse.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-legacy-sdk';
let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([a]) =>
    [
      deployment({
        name: 'first',
        model: 'm',
        baseUrl: fakeBase(a!),
        capabilities: ['completions', 'streaming'],
      }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack.close());

/** One content chunk, then a `data:` line of `bytes` that the upstream never ends. */
async function readCut(bytes: number): Promise<{ err: unknown; text: string }> {
  stack.fakes[0]!.setFaults([{ fault: { type: 'endless-line', afterChunks: 1, bytes } }]);
  const sdk = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  let text = '';
  try {
    const stream = await sdk.completions.create({ model: 'm', prompt: 'hello there', stream: true });
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    return { err: undefined, text };
  } catch (err) {
    return { err, text };
  }
}

it('cut mid-line: the SDK reads the gateway error event as an APIError', async () => {
  const { err, text } = await readCut(1000);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect((err as Error).message).toContain('stream interrupted');
  // The whole event before the cut was read.
  expect(text.length).toBeGreaterThan(0);
}, 60_000);

it('past the 16 MiB bound: the SDK reads an APIError naming the bound', async () => {
  const { err } = await readCut(17 * 1024 * 1024);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect((err as Error).message).toContain(`longer than ${MAX_SSE_BYTES} bytes`);
}, 60_000);
