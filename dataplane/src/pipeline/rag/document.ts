/**
 * The text of an ingested document: UTF-8 text only (plain, Markdown, CSV, JSON, HTML...).
 * Binary formats are refused by what their bytes are, with the way to get their text (PDFs
 * and images through /v1/ocr). Pure.
 */
import { GatewayError, invalidParam } from '../../errors.ts';
import { sniffMediaType } from '../media/sniff.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Declared types that can carry text; anything else is refused before its bytes are read as text. */
const TEXT_TYPES = /^(text\/[\w.+-]+|application\/(json|x-ndjson|xml|yaml|x-yaml|markdown|octet-stream))$/;

export function documentText(bytes: Buffer, declared: string, param: string): string {
  const type = declared.split(';', 1)[0]!.trim().toLowerCase();
  const sniffed = sniffMediaType(bytes);
  if (sniffed)
    throw invalidParam(
      param,
      `file type ${sniffed} is not accepted; send UTF-8 text${sniffed === 'application/pdf' || sniffed.startsWith('image/') ? ' (extract a PDF or image with POST /v1/ocr first)' : ''}`,
    );
  if (type !== '' && !TEXT_TYPES.test(type))
    throw invalidParam(
      param,
      `file type ${type} is not accepted; send UTF-8 text (text/plain, text/markdown, ...)`,
    );
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw invalidParam(param, 'the file is not UTF-8 text');
  }
  if (text.includes('\u0000')) throw invalidParam(param, 'the file is binary, not text');
  return text;
}

/** The JSON form's `file: {filename, content (base64), content_type}`. */
export function jsonFile(file: unknown, maxBytes: number): { filename: string; text: string } {
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    throw invalidParam('file', 'must be {filename, content (base64), content_type}');
  const f = file as { filename?: unknown; content?: unknown; content_type?: unknown };
  if (typeof f.content !== 'string' || f.content === '')
    throw invalidParam('file.content', 'is required (base64)');
  if (Math.floor((f.content.length * 3) / 4) > maxBytes + 2)
    throw new GatewayError('request_too_large', `file is larger than the limit of ${maxBytes} bytes`, {
      param: 'file',
    });
  if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(f.content))
    throw invalidParam('file.content', 'is not valid base64');
  const bytes = Buffer.from(f.content, 'base64');
  const filename =
    typeof f.filename === 'string' && f.filename !== '' ? f.filename.slice(0, 256) : 'document';
  return {
    filename,
    text: documentText(bytes, typeof f.content_type === 'string' ? f.content_type : '', 'file'),
  };
}
