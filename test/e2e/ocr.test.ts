/** `POST /v1/ocr` over raw HTTP: Mistral's OCR API proxied to ocr deployments, charged per page. */
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_URL_PAGES, fakeOcrMarkdown } from '../../dataplane/src/fake-provider/agents.ts';
import { FAKE_PNG } from '../../dataplane/src/fake-provider/openai-media.ts';
import { MAX_OCR_PAGES } from '../../dataplane/src/pipeline/ocr/document.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-ocr';
const POOR_KEY = 'sk-ocr-poor';
const OTHER_KEY = 'sk-ocr-other';
const ONE_PAGE_KEY = 'sk-ocr-one-page';
const PER_PAGE = 0.001;
const BUDGET = { limitUsd: 5, period: 'monthly' as const };
const MAX_UPLOAD = 64 * 1024;
let stack: Stack;
let chargedMicros = 0;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'mistral-ocr',
          model: 'mistral-ocr-latest',
          provider: 'openai-compatible',
          upstreamModel: 'mistral-ocr-2505',
          baseUrl: fakeBase(url!),
          capabilities: ['ocr'],
          extra: { pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perPage: PER_PAGE } },
        }),
        deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        tenant('globex', ['gpt-test']),
        apiKey('ocr', KEY, 'acme', { budget: BUDGET }),
        // Enough for a counted 2-page PDF, not for a URL document of unknown length.
        apiKey('ocr-poor', POOR_KEY, 'acme', { budget: { limitUsd: 10 * PER_PAGE, period: 'monthly' } }),
        // Room for one page and a half: a 1-page PDF fits, a PDF of 21 pages does not.
        apiKey('ocr-one-page', ONE_PAGE_KEY, 'acme', {
          budget: { limitUsd: 1.5 * PER_PAGE, period: 'monthly' },
        }),
        apiKey('globex', OTHER_KEY, 'globex'),
      ].join(''),
    { maxUploadBytes: MAX_UPLOAD },
  );
});
afterAll(() => stack.close());

interface OcrBody {
  model: string;
  pages: { index: number; markdown: string; dimensions: object }[];
  usage_info: { pages_processed: number };
  error?: { message: string; type: string; param?: string };
}

async function ocr(body: unknown, key = KEY) {
  const res = await fetch(`${stack.baseURL}/ocr`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (key === KEY && res.status === 200)
    chargedMicros += Math.round(Number(res.headers.get('x-gantry-cost')) * 1e6);
  return { res, json: (await res.json()) as OcrBody };
}

/** A minimal PDF with `n` page objects. */
const pdf = (n: number): string => {
  const pages = Array.from(
    { length: n },
    (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`,
  ).join('\n');
  const text = `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Count ${n} >> endobj\n${pages}\n%%EOF`;
  return `data:application/pdf;base64,${Buffer.from(text).toString('base64')}`;
};

/**
 * A PDF showing one page object (a decoy) and keeping `hidden` more in a Flate-compressed
 * object stream, as PDF 1.5+ writers do: readers (and the provider's bill) see 1 + hidden pages.
 */
const hiddenPagesPdf = (hidden: number): string => {
  let objects = '';
  const pairs: string[] = [];
  for (let i = 0; i < hidden; i++) {
    pairs.push(`${i + 5} ${objects.length}`);
    objects += '<< /Type /Page /Parent 2 0 R >>\n';
  }
  const header = `${pairs.join(' ')}\n`;
  const data = deflateSync(Buffer.from(header + objects));
  const text =
    `%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n` +
    `4 0 obj << /Type /ObjStm /N ${hidden} /First ${header.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`;
  const tail = '\nendstream\nendobj\n%%EOF';
  return `data:application/pdf;base64,${Buffer.concat([Buffer.from(text), data, Buffer.from(tail)]).toString('base64')}`;
};

describe('ocr', () => {
  it('reads a URL document into pages of markdown, charged per page processed', async () => {
    stack.fakes[0]!.reset();
    const { res, json } = await ocr({
      model: 'mistral-ocr-latest',
      document: {
        type: 'document_url',
        document_url: 'https://example.com/report.pdf',
        document_name: 'report',
      },
    });
    expect(res.status).toBe(200);
    expect(json.model).toBe('mistral-ocr-latest');
    expect(json.pages).toHaveLength(FAKE_URL_PAGES);
    expect(json.pages[1]).toMatchObject({ index: 1, markdown: fakeOcrMarkdown('report', 1) });
    expect(json.usage_info.pages_processed).toBe(FAKE_URL_PAGES);
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/ocr');
    expect(sent.body).toMatchObject({ model: 'mistral-ocr-2505' });
    const cost = Number(res.headers.get('x-gantry-cost'));
    expect(cost).toBeCloseTo(FAKE_URL_PAGES * PER_PAGE, 9);
    const record = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'ocr', deployment: 'mistral-ocr', costUsd: cost });
  });

  it('reads inline PDFs and images, and only the pages asked for', async () => {
    const inline = await ocr({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: pdf(2) },
    });
    expect(inline.json.pages).toHaveLength(2);
    const image = await ocr({
      model: 'mistral-ocr-latest',
      document: { type: 'image_url', image_url: `data:image/png;base64,${FAKE_PNG.toString('base64')}` },
    });
    expect(image.json.pages).toHaveLength(1);
    const some = await ocr({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: 'https://example.com/x.pdf' },
      pages: [0, 2],
    });
    expect(some.json.pages.map((p) => p.index)).toEqual([0, 2]);
    expect(Number(some.res.headers.get('x-gantry-cost'))).toBeCloseTo(2 * PER_PAGE, 9);
  });

  it('holds the most pages a document can have: a counted PDF fits a small budget, an unknown URL does not', async () => {
    expect(
      (
        await ocr(
          { model: 'mistral-ocr-latest', document: { type: 'document_url', document_url: pdf(2) } },
          POOR_KEY,
        )
      ).res.status,
    ).toBe(200);
    const unknown = await ocr(
      {
        model: 'mistral-ocr-latest',
        document: { type: 'document_url', document_url: 'https://example.com/big.pdf' },
      },
      POOR_KEY,
    );
    expect(unknown.res.status).toBe(402);
    expect(unknown.json.error?.message).toContain(`estimated at $${(MAX_OCR_PAGES * PER_PAGE).toFixed(1)}`);
  });

  it('holds the pages a PDF keeps in compressed object streams: a key with room for 1 page is refused a 21-page PDF that shows 1', async () => {
    const hidden = await ocr(
      { model: 'mistral-ocr-latest', document: { type: 'document_url', document_url: hiddenPagesPdf(20) } },
      ONE_PAGE_KEY,
    );
    expect(hidden.res.status).toBe(402);
    expect(hidden.json.error?.type).toBe('budget_exceeded');
    expect(hidden.json.error?.message).toContain(`estimated at $${(21 * PER_PAGE).toFixed(3)}`);
    const plain = await ocr(
      { model: 'mistral-ocr-latest', document: { type: 'document_url', document_url: pdf(1) } },
      ONE_PAGE_KEY,
    );
    expect(plain.res.status).toBe(200);
  });

  it('refuses wrong media types (400) and oversized inline documents (413), naming the field', async () => {
    const png = `data:image/png;base64,${FAKE_PNG.toString('base64')}`;
    const asDoc = await ocr({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: png },
    });
    expect(asDoc.res.status).toBe(400);
    expect(asDoc.json.error?.message).toContain('image/png is not accepted');
    const text = `data:image/png;base64,${Buffer.from('hello world').toString('base64')}`;
    const fake = await ocr({ model: 'mistral-ocr-latest', document: { type: 'image_url', image_url: text } });
    expect(fake.res.status).toBe(400);
    expect(fake.json.error?.param).toBe('document.image_url');
    const big = `data:application/pdf;base64,${Buffer.alloc(MAX_UPLOAD + 10, 0x25).toString('base64')}`;
    const tooBig = await ocr({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: big },
    });
    expect(tooBig.res.status).toBe(413);
    const ftp = await ocr({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: 'ftp://x/y.pdf' },
    });
    expect(ftp.res.status).toBe(400);
    const noDoc = await ocr({ model: 'mistral-ocr-latest' });
    expect(noDoc.json.error?.param).toBe('document');
    const pages = await ocr({
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: 'https://x/y' },
      pages: [-1],
    });
    expect(pages.json.error?.param).toBe('pages');
    const kind = await ocr({ model: 'mistral-ocr-latest', document: { type: 'file', file_id: 'f' } });
    expect(kind.json.error?.param).toBe('document.type');
  });

  it('refuses a model without the capability, and another tenant gets a 404', async () => {
    const doc = { type: 'document_url', document_url: 'https://example.com/a.pdf' };
    const chat = await ocr({ model: 'gpt-test', document: doc });
    expect(chat.res.status).toBe(400);
    expect(chat.json.error?.message).toContain('/v1/ocr');
    expect((await ocr({ model: 'mistral-ocr-latest', document: doc }, OTHER_KEY)).res.status).toBe(404);
  });

  it("the key's budget spend is the sum of the charged costs", async () => {
    const state = await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/ocr' }, BUDGET);
    expect(Math.round(state.spentUsd * 1e6)).toBe(chargedMicros);
    expect(chargedMicros).toBe(Math.round((FAKE_URL_PAGES + 2 + 1 + 2) * PER_PAGE * 1e6));
  });
});
