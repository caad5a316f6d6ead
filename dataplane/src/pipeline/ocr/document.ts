/**
 * The document of an OCR request (Mistral's `/v1/ocr` wire format), checked at the edge:
 * a `document_url` (a PDF, or an Office document) or an `image_url`, each an http(s) URL
 * the provider fetches or a `data:` URL carried inline. Inline bytes are size-limited and
 * their type is read from the bytes, not trusted from the label. Pure.
 */
import { GatewayError, invalidParam } from '../../errors.ts';
import { checkMediaType, IMAGE_TYPES } from '../media/sniff.ts';
import { countPdfPages, PDF_COUNT_BOUNDS } from './pdf-pages.ts';

/** Mistral's own ceiling on pages per document: the estimate when the count is unknown. */
export const MAX_OCR_PAGES = 1000;
/** The fewest pages a read document or image can be billed: what a call left unanswered costs. */
export const LEAST_OCR_PAGES = 1;
/** Longest http(s) URL forwarded. */
export const MAX_URL_CHARS = 8192;

export const DOCUMENT_TYPES: readonly string[] = ['application/pdf'];

export type OcrDocument =
  | { type: 'document_url'; document_url: string; document_name?: string }
  | { type: 'image_url'; image_url: string | { url: string } };

export interface CheckedDocument {
  kind: 'document' | 'image';
  /** Pages the request may read at most: the estimate the budget holds. */
  maxPages: number;
}

interface DataUrl {
  declared: string;
  bytes: Buffer;
}

/** `data:<type>;base64,<payload>`; other data URLs carry no binary document. */
export function parseDataUrl(url: string, param: string, maxBytes: number): DataUrl {
  const m = /^data:([^;,]*)(;[^,]*)?,/.exec(url.slice(0, 512));
  if (!m || !(m[2] ?? '').split(';').includes('base64'))
    throw invalidParam(param, 'a data: URL must be base64-encoded (data:<type>;base64,...)');
  const payload = url.slice(m[0].length);
  // Decoded size from the encoded length, checked before decoding anything.
  if (Math.floor((payload.length * 3) / 4) > maxBytes + 2)
    throw new GatewayError(
      'request_too_large',
      `${param}: the inline document is larger than the limit of ${maxBytes} bytes`,
      { param },
    );
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload)) throw invalidParam(param, 'the data: URL is not valid base64');
  const bytes = Buffer.from(payload, 'base64');
  if (bytes.length > maxBytes)
    throw new GatewayError(
      'request_too_large',
      `${param}: the inline document is larger than the limit of ${maxBytes} bytes`,
      { param },
    );
  if (bytes.length === 0) throw invalidParam(param, 'the inline document is empty');
  return { declared: m[1] ?? '', bytes };
}

/** Pages an inline PDF may have (see pdf-pages.ts): from 1 to MAX_OCR_PAGES, the ceiling when unknown. */
export function pdfPageCount(bytes: Buffer): number {
  return countPdfPages(bytes, { ceiling: MAX_OCR_PAGES, ...PDF_COUNT_BOUNDS });
}

function checkUrl(url: unknown, param: string): string {
  if (typeof url !== 'string' || url === '') throw invalidParam(param, 'is required');
  if (url.startsWith('data:')) return url;
  if (!/^https?:\/\//i.test(url)) throw invalidParam(param, 'must be an http(s) URL or a data: URL');
  if (url.length > MAX_URL_CHARS) throw invalidParam(param, `URL is longer than ${MAX_URL_CHARS} characters`);
  return url;
}

/** The pages asked for, when the request names them (`pages`: zero-based indexes). */
export function requestedPages(pages: unknown): number | undefined {
  if (pages === undefined || pages === null) return undefined;
  if (!Array.isArray(pages) || pages.length === 0)
    throw invalidParam('pages', 'must be a non-empty array of page indexes');
  if (pages.length > MAX_OCR_PAGES) throw invalidParam('pages', `at most ${MAX_OCR_PAGES} pages`);
  for (const p of pages)
    if (!Number.isInteger(p) || (p as number) < 0 || (p as number) >= MAX_OCR_PAGES)
      throw invalidParam('pages', `each page is a whole number from 0 to ${MAX_OCR_PAGES - 1}`);
  return new Set(pages).size;
}

export function checkDocument(document: unknown, pages: unknown, maxBytes: number): CheckedDocument {
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw invalidParam('document', 'is required: {type: "document_url" | "image_url", ...}');
  const d = document as Record<string, unknown>;
  const asked = requestedPages(pages);
  if (d.type === 'image_url') {
    const raw =
      typeof d.image_url === 'object' && d.image_url !== null
        ? (d.image_url as { url?: unknown }).url
        : d.image_url;
    const url = checkUrl(raw, 'document.image_url');
    if (url.startsWith('data:')) {
      const data = parseDataUrl(url, 'document.image_url', maxBytes);
      const type = checkMediaType(data.bytes, data.declared, IMAGE_TYPES);
      if (!type.ok) throw invalidParam('document.image_url', type.reason);
    }
    return { kind: 'image', maxPages: 1 };
  }
  if (d.type === 'document_url') {
    const url = checkUrl(d.document_url, 'document.document_url');
    let counted: number | undefined;
    if (url.startsWith('data:')) {
      const data = parseDataUrl(url, 'document.document_url', maxBytes);
      const type = checkMediaType(data.bytes, data.declared, DOCUMENT_TYPES);
      if (!type.ok) throw invalidParam('document.document_url', type.reason);
      counted = pdfPageCount(data.bytes);
    }
    const maxPages = Math.min(asked ?? MAX_OCR_PAGES, counted ?? MAX_OCR_PAGES);
    return { kind: 'document', maxPages };
  }
  throw invalidParam(
    'document.type',
    `must be document_url or image_url${typeof d.type === 'string' ? `, not ${d.type}` : ''}`,
  );
}

/** Pages to charge: what the provider says it processed, else the pages it returned; never above the ceiling. */
export function billedPages(body: Record<string, unknown>): number {
  const info = body.usage_info as { pages_processed?: unknown } | undefined;
  const reported = info?.pages_processed;
  const n =
    typeof reported === 'number' && Number.isInteger(reported) && reported >= 0
      ? reported
      : Array.isArray(body.pages)
        ? body.pages.length
        : 0;
  return Math.min(n, MAX_OCR_PAGES);
}
