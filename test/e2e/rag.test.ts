/**
 * `POST /v1/rag/ingest` and `/v1/rag/query` over raw HTTP: documents chunked and embedded
 * through the money path into the caller's own index, questions answered from the top-k
 * chunks with citations, both calls charged, and nobody else's index ever searched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/behaviour.ts';
import { fakeEmbedding } from '../../dataplane/src/fake-provider/embedding.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { rawStream } from '../harness/raw-stream.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-rag';
const SAME_TENANT_KEY = 'sk-rag-2';
const OTHER_TENANT_KEY = 'sk-rag-other';
const BUDGET = { limitUsd: 5, period: 'monthly' as const };
const MAX_UPLOAD = 32 * 1024;
const EMBED_PRICE = 10;
let stack: Stack;
let chargedMicros = 0;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'embedder',
          model: 'embed-test',
          baseUrl: fakeBase(url!),
          capabilities: ['embeddings'],
          pricing: { inputPerMillionTokens: EMBED_PRICE, outputPerMillionTokens: 0 },
        }),
        deployment({
          name: 'embedder-2',
          model: 'embed-other',
          baseUrl: fakeBase(url!),
          capabilities: ['embeddings'],
        }),
        deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        tenant('globex'),
        apiKey('rag', KEY, 'acme', { budget: BUDGET }),
        apiKey('rag-2', SAME_TENANT_KEY, 'acme'),
        apiKey('rag-other', OTHER_TENANT_KEY, 'globex'),
      ].join(''),
    { maxUploadBytes: MAX_UPLOAD },
  );
});
afterAll(() => stack.close());

const PARAGRAPHS = [
  'The harbour of Lisbon sits where the Tagus river meets the Atlantic, and ferries cross it every twenty minutes all day long.',
  'Our refund policy allows returns within thirty days of delivery when the item is unused and still in its original packaging.',
  'The office coffee machine is descaled every Friday afternoon by whoever arrives last, using the white tablets in the drawer.',
];
const DOC = PARAGRAPHS.join('\n\n');

interface Json {
  [k: string]: unknown;
  error?: { message: string; param?: string; type: string };
}

async function post(path: string, body: unknown, key = KEY) {
  const form = body instanceof FormData;
  const res = await fetch(`${stack.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...(!form && { 'content-type': 'application/json' }) },
    body: form ? body : JSON.stringify(body),
  });
  if (key === KEY && res.status === 200)
    chargedMicros += Math.round(Number(res.headers.get('x-gantry-cost')) * 1e6);
  return { res, json: (await res.json()) as Json };
}

const ingest = (extra: Record<string, unknown> = {}, key = KEY) =>
  post(
    '/rag/ingest',
    {
      embedding_model: 'embed-test',
      text: DOC,
      filename: 'handbook.txt',
      chunking: { chunk_size: 200, chunk_overlap: 0 },
      ...extra,
    },
    key,
  );

interface Citation {
  source: number;
  filename: string;
  text: string;
  score: number;
  chunk_index: number;
}

const cosine = (a: number[], b: number[]) => a.reduce((n, x, i) => n + x * b[i]!, 0);

describe('rag', () => {
  it('ingests text: chunked at paragraph breaks, embedded in one call, charged for the tokens', async () => {
    stack.fakes[0]!.reset();
    const { res, json } = await ingest();
    expect(res.status).toBe(200);
    expect(json).toMatchObject({
      object: 'rag.ingest',
      index: 'default',
      filename: 'handbook.txt',
      chunks: 3,
      embedding_model: 'embed-test',
    });
    expect(json.id).toMatch(/^doc_[0-9a-f]{32}$/);
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect((sent.body as { input: string[] }).input).toEqual(PARAGRAPHS);
    const tokens = (json.usage as { prompt_tokens: number }).prompt_tokens;
    const cost = Number(res.headers.get('x-gantry-cost'));
    expect(cost).toBeCloseTo((tokens * EMBED_PRICE) / 1e6, 9);
    const record = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({
      endpoint: 'rag.ingest',
      requestedModel: 'embed-test',
      deployment: 'embedder',
      costUsd: cost,
    });
  });

  it('ingests a multipart text file', async () => {
    const form = new FormData();
    form.append('embedding_model', 'embed-test');
    form.append(
      'file',
      new Blob(['# Parking\n\nVisitors park on level minus two of the north garage.'], {
        type: 'text/markdown',
      }),
      'parking.md',
    );
    const { res, json } = await post('/rag/ingest', form);
    expect(res.status).toBe(200);
    expect(json).toMatchObject({ filename: 'parking.md', chunks: 1, index_documents: 2, index_chunks: 4 });
  });

  it('answers from the top-k chunks of its own index, with citations, charging embedding and answer', async () => {
    const question = 'How many days do I have to return an unused item for a refund?';
    const { res, json } = await post('/rag/query', { model: 'gpt-test', query: question, top_k: 2 });
    expect(res.status).toBe(200);
    const citations = json.citations as Citation[];
    expect(citations).toHaveLength(2);
    // The ranking is the fake embedder's cosine order over the index's four chunks.
    const chunks = [...PARAGRAPHS, '# Parking\n\nVisitors park on level minus two of the north garage.'];
    const q = fakeEmbedding(question);
    const expected = chunks
      .map((text) => ({ text, score: cosine(q, fakeEmbedding(text)) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 2);
    expect(citations.map((c) => c.text)).toEqual(expected.map((e) => e.text));
    expect(citations[0]!.score).toBeCloseTo(expected[0]!.score, 5);
    expect(citations[0]).toMatchObject({ source: 1 });
    const answer = (json.choices as { message: { content: string } }[])[0]!.message.content;
    expect(answer).toBe(fakeAnswer(question));
    const chat = stack.fakes[0]!.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(chat.messages[0]!.role).toBe('system');
    expect(chat.messages[0]!.content).toContain(
      `[1] (${expected[0]!.text.startsWith('#') ? 'parking.md' : 'handbook.txt'})`,
    );
    expect(chat.messages[0]!.content).toContain(expected[1]!.text);
    const embedCall = stack.fakes[0]!.requests.at(-2)!;
    expect(embedCall.body).toMatchObject({ input: [question] });

    const id = res.headers.get('x-gantry-request-id');
    const answerRecord = await usageRecord(stack, 'acme', id);
    const embedRecord = await usageRecord(stack, 'acme', `${id}:embedding`);
    expect(answerRecord).toMatchObject({ endpoint: 'rag.query', deployment: 'chat' });
    expect(embedRecord).toMatchObject({ endpoint: 'rag.query', deployment: 'embedder' });
    expect(Number(res.headers.get('x-gantry-cost'))).toBeCloseTo(
      answerRecord.costUsd + embedRecord.costUsd,
      9,
    );
    expect(embedRecord.costUsd).toBeGreaterThan(0);
  });

  it('streams the answer as chat chunks, the first carrying the citations, the trailer the whole cost', async () => {
    const question = 'Where do the ferries cross the river?';
    const s = await rawStream(
      `${stack.baseURL}/rag/query`,
      { authorization: `Bearer ${KEY}` },
      { model: 'gpt-test', query: question, top_k: 1, stream: true, stream_options: { include_usage: true } },
    );
    expect(s.status).toBe(200);
    expect(s.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const first = s.events[0] as { object: string; citations: Citation[] };
    expect(first.object).toBe('chat.completion.chunk');
    expect(first.citations).toHaveLength(1);
    expect(s.events.slice(1).some((e) => 'citations' in e)).toBe(false);
    const text = s.events
      .map((e) => (e.choices as { delta?: { content?: string } }[] | undefined)?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe(fakeAnswer(question));
    const id = s.headers['x-gantry-request-id'] as string;
    const answer = await usageRecord(stack, 'acme', id);
    const embedding = await usageRecord(stack, 'acme', `${id}:embedding`);
    expect(answer).toMatchObject({ endpoint: 'rag.query', stream: true });
    const cost = Number(s.trailers['x-gantry-cost']);
    expect(cost).toBeCloseTo(answer.costUsd + embedding.costUsd, 9);
    chargedMicros += Math.round(cost * 1e6);
  });

  it('never searches another key or tenant index', async () => {
    const q = { model: 'gpt-test', query: 'refund policy' };
    const sameTenant = await post('/rag/query', q, SAME_TENANT_KEY);
    expect(sameTenant.res.status).toBe(404);
    expect(sameTenant.json.error?.param).toBe('index');
    expect((await post('/rag/query', q, OTHER_TENANT_KEY)).res.status).toBe(404);
    // Globex builds its own "default" index: acme's queries still see only acme's chunks.
    expect(
      (
        await ingest(
          {
            text: 'Globex refund policy: no refunds, ever, under any circumstances at all whatsoever.',
            filename: 'globex.txt',
          },
          OTHER_TENANT_KEY,
        )
      ).res.status,
    ).toBe(200);
    const mine = await post('/rag/query', { ...q, top_k: 50 });
    const files = new Set((mine.json.citations as Citation[]).map((c) => c.filename));
    expect(files).toEqual(new Set(['handbook.txt', 'parking.md']));
    const theirs = await post('/rag/query', { ...q, top_k: 50 }, OTHER_TENANT_KEY);
    expect((theirs.json.citations as Citation[]).map((c) => c.filename)).toEqual(['globex.txt']);
  });

  it('refuses hostile and wrong input with a clear 4xx naming the field', async () => {
    const pdf = new FormData();
    pdf.append('embedding_model', 'embed-test');
    pdf.append('file', new Blob([Buffer.from('%PDF-1.7\n%binary')], { type: 'application/pdf' }), 'a.pdf');
    const cases: [Promise<{ res: Response; json: Json }>, number, string][] = [
      [post('/rag/query', { model: 'gpt-test', query: 'x', top_k: 100000 }), 400, 'top_k'],
      [post('/rag/query', { model: 'gpt-test', query: 'x', top_k: 0 }), 400, 'top_k'],
      [post('/rag/query', { model: 'gpt-test', query: 'x', stream: 'yes' }), 400, 'stream'],
      [post('/rag/query', { model: 'gpt-test', query: 'x', tools: [] }), 400, 'tools'],
      [post('/rag/query', { model: 'gpt-test', query: 'x', index: '../etc' }), 400, 'index'],
      [post('/rag/query', { model: 'gpt-test', query: 'x', index: 'nope' }), 404, 'index'],
      [post('/rag/ingest', pdf), 400, 'file'],
      [ingest({ text: 'x'.repeat(MAX_UPLOAD + 1) }), 413, 'text'],
      [ingest({ text: '   ' }), 400, 'file'],
      [ingest({ chunking: { chunk_size: 10 } }), 400, 'chunk_size'],
      [ingest({ chunking: { chunk_size: 200, chunk_overlap: 150 } }), 400, 'chunk_overlap'],
      [ingest({ embedding_model: 'gpt-test' }), 400, 'embedding_model'],
      [ingest({ embedding_model: 'embed-other' }), 400, 'embedding_model'],
      [
        ingest({
          text: undefined,
          file: {
            filename: 'b.bin',
            content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]).toString('base64'),
          },
        }),
        400,
        'file',
      ],
    ];
    for (const [pending, status, param] of cases) {
      const { res, json } = await pending;
      expect(res.status, param).toBe(status);
      expect(json.error?.param, param).toBe(param);
    }
    const pdfAnswer = await post(
      '/rag/ingest',
      (() => {
        const f = new FormData();
        f.append('embedding_model', 'embed-test');
        f.append('file', new Blob([Buffer.from('%PDF-1.7\n%binary')], { type: 'application/pdf' }), 'a.pdf');
        return f;
      })(),
    );
    expect(pdfAnswer.json.error?.message).toContain('/v1/ocr');
  });

  it('shows and deletes documents of its own index only, free of charge', async () => {
    const get = (key = KEY) =>
      fetch(`${stack.baseURL}/rag/indexes/default`, { headers: { authorization: `Bearer ${key}` } });
    const del = (id: string, key = KEY) =>
      fetch(`${stack.baseURL}/rag/indexes/default/documents/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      });
    const before = (await (await get()).json()) as { documents: number; chunks: number };
    expect(before).toMatchObject({
      object: 'rag.index',
      embedding_model: 'embed-test',
      documents: 2,
      chunks: 4,
    });
    expect((await get(SAME_TENANT_KEY)).status).toBe(404);
    const doc = await ingest({
      text: 'A temporary note about the fire drill on Tuesday at ten in the morning, lasting an hour.',
      filename: 'drill.txt',
    });
    const id = doc.json.id as string;
    expect((await del(id, OTHER_TENANT_KEY)).status).toBe(404);
    const gone = await del(id);
    expect(gone.status).toBe(200);
    expect(await gone.json()).toEqual({
      object: 'rag.document.deleted',
      id,
      index: 'default',
      deleted: true,
    });
    expect((await del(id)).status).toBe(404);
    expect(await (await get()).json()).toMatchObject(before);
  });

  it("the key's budget spend is the sum of the charged costs", async () => {
    const state = await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/rag' }, BUDGET);
    expect(chargedMicros).toBeGreaterThan(0);
    expect(Math.round(state.spentUsd * 1e6)).toBe(chargedMicros);
  });
});
