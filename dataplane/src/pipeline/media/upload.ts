/**
 * Reads a multipart/form-data upload at the edge: text fields and files, each file within
 * the size limit and of an accepted media type. An oversized file is refused with a 413 as
 * soon as it passes the limit, before the rest is read.
 */
import type { FastifyRequest } from 'fastify';
// Its declarations add parts() and isMultipart() to the request type.
import type {} from '@fastify/multipart';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { MediaFile } from '../../providers/types.ts';
import { checkMediaType } from './sniff.ts';
import { checkModelName } from '../../server/model-name.ts';

export interface UploadRules {
  /** Largest accepted file, in bytes. */
  maxFileBytes: number;
  /**
   * Accepted media types per file field (`any`: whatever the bytes are, as the Files API
   * takes); a file in any other field is refused.
   */
  files: Readonly<Record<string, readonly string[] | 'any'>>;
  /**
   * File fields that may come more than once (an image edit's `image[]`); any other takes one
   * file, and a second is refused rather than buffered and silently dropped.
   */
  repeatable?: readonly string[];
}

export interface Upload {
  fields: Record<string, string>;
  files: MediaFile[];
}

const KB = 1024;
const MB = 1024 * KB;
const sizeText = (bytes: number): string =>
  bytes >= MB && bytes % MB === 0
    ? `${bytes / MB} MB`
    : bytes >= KB && bytes % KB === 0
      ? `${bytes / KB} KB`
      : `${bytes} bytes`;

/** The array form some clients send (`image[]`) is the same field. */
const fieldName = (name: string): string => (name.endsWith('[]') ? name.slice(0, -2) : name);

export async function readUpload(request: FastifyRequest, rules: UploadRules): Promise<Upload> {
  if (!request.isMultipart())
    throw new GatewayError(
      'unsupported_media_type',
      `${request.routeOptions.url ?? 'this route'} takes multipart/form-data, not ${request.headers['content-type'] ?? 'an empty content-type'}`,
    );
  const upload: Upload = { fields: {}, files: [] };
  try {
    for await (const part of request.parts({ limits: { fileSize: rules.maxFileBytes } })) {
      const name = fieldName(part.fieldname);
      if (part.type === 'field') {
        if (part.valueTruncated)
          throw new GatewayError('request_too_large', `field ${name} is too long`, { param: name });
        upload.fields[name] = String(part.value);
        // The edge hook sees no multipart fields: the model names in a form are bounded here.
        if (name === 'model' || name === 'embedding_model') checkModelName(name, upload.fields[name]);
        continue;
      }
      const allowed = rules.files[name];
      if (!allowed) {
        part.file.resume();
        throw invalidParam(
          name,
          `unexpected file field; this route takes ${Object.keys(rules.files).join(', ')}`,
        );
      }
      if (!rules.repeatable?.includes(name) && upload.files.some((f) => f.field === name)) {
        part.file.resume();
        throw invalidParam(name, 'takes one file; this upload has more than one');
      }
      const data = await part.toBuffer();
      const type =
        allowed === 'any'
          ? { ok: true as const, type: part.mimetype || 'application/octet-stream' }
          : checkMediaType(data, part.mimetype, allowed);
      if (!type.ok) throw invalidParam(name, type.reason);
      upload.files.push({ field: name, filename: part.filename || name, contentType: type.type, data });
    }
  } catch (err) {
    throw uploadError(err, rules);
  }
  return upload;
}

/** @fastify/multipart's limit errors in SPEC.md's shape, naming the limit. */
function uploadError(err: unknown, rules: UploadRules): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE')
    return new GatewayError(
      'request_too_large',
      `uploaded file is larger than the limit of ${sizeText(rules.maxFileBytes)}`,
    );
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return new GatewayError('request_too_large', 'the upload has too many parts');
  if (code === 'FST_PROTO_VIOLATION' || code === 'FST_MP_PREMATURE_CLOSE')
    return new GatewayError('invalid_request_error', 'the multipart body is malformed or incomplete');
  return err;
}

/** A required text field of the form. */
export function requiredField(upload: Upload, name: string): string {
  const v = upload.fields[name];
  if (v === undefined || v === '') throw invalidParam(name, 'is required');
  return v;
}

/** A required file of the form. */
export function requiredFile(upload: Upload, name: string): MediaFile {
  const f = upload.files.find((x) => x.field === name);
  if (!f) throw invalidParam(name, 'a file is required');
  return f;
}
