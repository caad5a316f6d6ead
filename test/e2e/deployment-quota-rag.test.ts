/**
 * A deployment's tpm under RAG ingest: each embedding batch is one request to the provider and
 * counts its own tokens (taken and corrected per batch), not the whole document's; a batch
 * refused after others were embedded says what was sent and charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-deployment-quota-rag';
// 20,000 tokens in 1,000 chunks: four batches of up to 256.
const para = (i: number) =>
  `Paragraph number ${String(i).padStart(5, '0')} talks about harbours, ferries and the tide of the river.`;
const text = Array.from({ length: 1000 }, (_, i) => para(i)).join('\n\n');

describe('RAG ingest and a deployment tpm', () => {
  let stack: Stack;
  const now = Date.UTC(2026, 0, 1);

  beforeAll(async () => {
    stack = await startStack(
      ([u]) =>
        [
          deployment({
            name: 'embedder',
            model: 'embed-test',
            baseUrl: fakeBase(u!),
            capabilities: ['embeddings'],
            extra: { tpm: 30_000 },
          }),
          tenant('acme'),
          apiKey('k', KEY, 'acme'),
        ].join(''),
      { fakes: 1, clock: () => now },
    );
  });
  afterAll(() => stack.close());

  const ingest = (index: string) =>
    fetch(`${stack.baseURL}/rag/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        embedding_model: 'embed-test',
        text,
        filename: 'a.txt',
        index,
        chunking: { chunk_size: 100, chunk_overlap: 0 },
      }),
    });

  it('each batch takes its own tokens: a document well under the tpm is embedded whole', async () => {
    const res = await ingest('i1');
    const body = (await res.json()) as { chunks: number; usage: { prompt_tokens: number } };
    expect(res.status).toBe(200);
    expect(body.chunks).toBe(1000);
    // The premise: the whole document twice would not fit the tpm, a quarter of it does.
    expect(body.usage.prompt_tokens * 2).toBeGreaterThan(30_000);
    expect(body.usage.prompt_tokens * 1.25).toBeLessThan(30_000);
    expect(stack.fakes[0]!.requests.map((r) => (r.body as { input: unknown[] }).input.length)).toEqual([
      256, 256, 256, 232,
    ]);
  });

  it('the window holds what was embedded; the refused batch says what went before it', async () => {
    // The first document's 20,000 tokens stay in the window: one more batch fits, the second not.
    const res = await ingest('i2');
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).not.toBeNull();
    expect(body.error.message).toMatch(/provider quota/);
    const said =
      /not charged, for batch (\d) of 4; the first (\d+) of 1000 inputs, embedded before it, were sent and charged \((\d+) tokens\)/.exec(
        body.error.message,
      );
    expect(said).not.toBeNull();
    const [batch, served, tokens] = said!.slice(1).map(Number);
    expect(batch).toBeGreaterThan(1);
    expect(served).toBe((batch! - 1) * 256);
    // The fake counts 20 tokens a chunk.
    expect(tokens).toBe(served! * 20);
  });
});
