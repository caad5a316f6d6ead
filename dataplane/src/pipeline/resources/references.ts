/**
 * Ids of owned objects that a request body refers to, by field, so each can be checked
 * against the caller before anything goes upstream. Pure.
 */
import { invalidParam } from '../../errors.ts';
import { MAX_PATH_PARAM_CHARS } from '../../server/limits.ts';
import type { Family } from '../../stores/ownership/types.ts';

/** The longest id looked up: an id in a body gets the bound an id in a path gets. */
export const MAX_OBJECT_ID_CHARS = MAX_PATH_PARAM_CHARS;

/**
 * What providers' object ids look like (`file-abc`, `ftjob-abc123`, `cfile_…`, `ft-<uuid>`):
 * letters, digits, `_ : -` and single dots. An id a caller chose that goes into an upstream
 * path must look so: nothing an upstream could read as a path (a slash, `..`, a percent sign
 * it might decode) is ever sent. Linear: each repetition starts at a dot.
 */
const PLAIN_ID = /^[A-Za-z0-9][A-Za-z0-9_:-]*(?:\.[A-Za-z0-9_:-]+)*$/;

export const isPlainId = (id: string): boolean => PLAIN_ID.test(id);

/** A longer id is nobody's: a 400 naming the field, before any lookup, without echoing it. */
export function checkObjectId(field: string, id: string): void {
  if (id.length > MAX_OBJECT_ID_CHARS)
    throw invalidParam(field, `is longer than ${MAX_OBJECT_ID_CHARS} characters, so it is no object's id`);
}

export interface Reference {
  /** The body field, as errors name it (`file_ids[1]`, `tool_resources.file_search.vector_store_ids[0]`). */
  field: string;
  family: Family;
  id: string;
}

/** Which request this is: a family's create or update, or a sub-resource's create. */
export type ReferringRequest =
  'batch' | 'vector_store' | 'vector_store_file' | 'assistant' | 'container' | 'container_file';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function one(out: Reference[], body: Record<string, unknown>, field: string, family: Family): void {
  const v = body[field];
  if (typeof v === 'string') out.push({ field, family, id: v });
}

function many(out: Reference[], value: unknown, field: string, family: Family): void {
  if (!Array.isArray(value)) return;
  value.forEach((id, i) => {
    if (typeof id === 'string') out.push({ field: `${field}[${i}]`, family, id });
  });
}

export function referencesOf(request: ReferringRequest, body: Record<string, unknown>): Reference[] {
  const out: Reference[] = [];
  switch (request) {
    case 'batch':
      one(out, body, 'input_file_id', 'file');
      break;
    case 'vector_store':
    case 'container':
      many(out, body.file_ids, 'file_ids', 'file');
      break;
    case 'vector_store_file':
    case 'container_file':
      one(out, body, 'file_id', 'file');
      break;
    case 'assistant': {
      const tr = isRecord(body.tool_resources) ? body.tool_resources : {};
      const ci = isRecord(tr.code_interpreter) ? tr.code_interpreter : {};
      const fs = isRecord(tr.file_search) ? tr.file_search : {};
      many(out, ci.file_ids, 'tool_resources.code_interpreter.file_ids', 'file');
      many(out, fs.vector_store_ids, 'tool_resources.file_search.vector_store_ids', 'vector_store');
      // Vector stores created inline from files are made on the assistant's deployment.
      if (Array.isArray(fs.vector_stores))
        fs.vector_stores.forEach((vs, i) => {
          if (isRecord(vs))
            many(out, vs.file_ids, `tool_resources.file_search.vector_stores[${i}].file_ids`, 'file');
        });
      break;
    }
  }
  return out;
}
