import { describe, expect, it } from 'vitest';
import { unitCostUsd } from '../media/pricing.ts';
import { FAKE_PNG } from '../../fake-provider/openai-media.ts';
import {
  billedPages,
  checkDocument,
  MAX_OCR_PAGES,
  parseDataUrl,
  pdfPageCount,
  requestedPages,
} from './document.ts';

const pdfBytes = (n: number): Buffer =>
  Buffer.from(
    `%PDF-1.7\n<< /Type /Pages /Count ${n} >>\n${Array.from({ length: n }, () => '<< /Type /Page >>').join('\n')}`,
  );
const dataUrl = (type: string, b: Buffer) => `data:${type};base64,${b.toString('base64')}`;

describe('ocr document', () => {
  it('counts PDF page objects, not the page tree, and holds the ceiling when it finds none', () => {
    expect(pdfPageCount(pdfBytes(3))).toBe(3);
    expect(pdfPageCount(Buffer.from('%PDF-1.7 /Type/Page/Type /Pages'))).toBe(1);
    expect(pdfPageCount(Buffer.from('%PDF-1.7 compressed'))).toBe(MAX_OCR_PAGES);
  });

  it('estimates at most the pages asked, counted, or the ceiling', () => {
    const url = { type: 'document_url', document_url: 'https://x/doc.pdf' };
    expect(checkDocument(url, undefined, 100).maxPages).toBe(MAX_OCR_PAGES);
    expect(checkDocument(url, [0, 1, 1], 100).maxPages).toBe(2);
    const inline = { type: 'document_url', document_url: dataUrl('application/pdf', pdfBytes(4)) };
    expect(checkDocument(inline, undefined, 1000).maxPages).toBe(4);
    expect(checkDocument(inline, [0], 1000).maxPages).toBe(1);
    expect(
      checkDocument({ type: 'image_url', image_url: { url: 'https://x/a.png' } }, undefined, 1).maxPages,
    ).toBe(1);
  });

  it('reads the type from the bytes: a PNG labelled PDF is refused', () => {
    const lying = { type: 'document_url', document_url: dataUrl('application/pdf', FAKE_PNG) };
    expect(() => checkDocument(lying, undefined, 1e6)).toThrow(/image\/png is not accepted/);
    const png = { type: 'image_url', image_url: dataUrl('image/png', FAKE_PNG) };
    expect(checkDocument(png, undefined, 1e6).kind).toBe('image');
  });

  it('refuses oversize (413) before decoding, bad base64 and non-base64 data URLs', () => {
    const big = dataUrl('application/pdf', Buffer.alloc(2000, 0x41));
    expect(() => parseDataUrl(big, 'p', 1000)).toThrow(expect.objectContaining({ status: 413 }));
    expect(() => parseDataUrl('data:application/pdf;base64,@@@@', 'p', 1000)).toThrow(/not valid base64/);
    expect(() => parseDataUrl('data:text/plain,hello', 'p', 1000)).toThrow(/base64-encoded/);
  });

  it('checks page lists', () => {
    expect(requestedPages(undefined)).toBeUndefined();
    expect(() => requestedPages([])).toThrow(/non-empty/);
    expect(() => requestedPages([1.5])).toThrow(/whole number/);
    expect(() => requestedPages(Array.from({ length: MAX_OCR_PAGES + 1 }, (_, i) => i))).toThrow(/at most/);
  });

  it('bills the pages the provider processed, else the pages returned, capped', () => {
    expect(billedPages({ usage_info: { pages_processed: 7 }, pages: [1] })).toBe(7);
    expect(billedPages({ pages: [{}, {}] })).toBe(2);
    expect(billedPages({ usage_info: { pages_processed: -3 } })).toBe(0);
    expect(billedPages({ usage_info: { pages_processed: 1e9 } })).toBe(MAX_OCR_PAGES);
  });
});

describe('per-page and per-request prices', () => {
  it('charge whole micro-dollars per unit, nothing for zero units or no price', () => {
    expect(
      unitCostUsd({ inputPerMillionTokens: 0, outputPerMillionTokens: 0, perPage: 0.0015 }, 'perPage', 3),
    ).toBe(0.0045);
    expect(
      unitCostUsd({ inputPerMillionTokens: 0, outputPerMillionTokens: 0, perRequest: 0.01 }, 'perRequest', 0),
    ).toBe(0);
    expect(unitCostUsd({ inputPerMillionTokens: 1, outputPerMillionTokens: 1 }, 'perPage', 5)).toBe(0);
  });
});
