/**
 * multipart/form-data encoding for upstream uploads. Built by hand into one buffer: the
 * gateway has already read and size-checked every part, and a known length lets the
 * upstream call be retried on another deployment without re-reading a stream.
 */
import { randomBytes } from 'node:crypto';
import type { MediaFile } from '../types.ts';

export interface EncodedForm {
  body: Buffer;
  contentType: string;
}

/** Quotes and line breaks cannot appear inside a quoted header parameter. */
const quoted = (s: string): string => s.replace(/["\r\n\\]/g, '_');

export function encodeMultipart(
  fields: Readonly<Record<string, string>>,
  files: readonly MediaFile[],
  boundary = `gantry-${randomBytes(12).toString('hex')}`,
): EncodedForm {
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    chunks.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`,
      ),
    );
  for (const f of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(f.field)}"; filename="${quoted(f.filename)}"\r\n` +
          `content-type: ${f.contentType}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
