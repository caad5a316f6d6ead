/**
 * Owned objects a request body names wherever they sit: a string `file_id` (an OpenAI
 * `{type:'file', file:{file_id}}` part, an Anthropic block passed through verbatim with a
 * `file` source nested in it, a Responses `input_file`), `file_ids` and `vector_store_ids`
 * lists, a `code_interpreter` tool's `container` id. Every one is checked against the caller
 * before anything goes upstream, so a new part shape cannot slip a foreign id past the check.
 * Pure; allocates nothing for a body without such fields.
 */
import { invalidParam } from '../../errors.ts';
import { depthMessage, MAX_JSON_DEPTH_CEILING } from '../../formats/json-depth.ts';
import type { Family } from '../../stores/ownership/types.ts';
import type { Reference } from './references.ts';

/**
 * As deep as any body may be configured to nest (the server's depth guard, and the batch
 * line check, keep bodies within it). Past it the walk refuses rather than stops: an id it
 * did not look at would still be forwarded.
 */
const MAX_DEPTH = MAX_JSON_DEPTH_CEILING;

type Segment = string | number;

/** Fields that list ids of one family. */
const LISTS: ReadonlyMap<string, Family> = new Map([
  ['file_ids', 'file'],
  ['vector_store_ids', 'vector_store'],
]);

const pathOf = (segments: readonly Segment[]): string =>
  segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

function walk(value: object, segments: Segment[], out: Reference[], depth: number): void {
  if (depth > MAX_DEPTH) throw invalidParam(pathOf(segments), depthMessage(MAX_DEPTH));
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v !== 'object' || v === null) continue;
      segments.push(i);
      walk(v, segments, out, depth + 1);
      segments.pop();
    }
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const v = record[key];
    if (key === 'file_id' && typeof v === 'string') {
      out.push({ field: pathOf([...segments, key]), family: 'file', id: v });
      continue;
    }
    const family = LISTS.get(key);
    if (family !== undefined && Array.isArray(v)) {
      v.forEach((id, i) => {
        if (typeof id === 'string') out.push({ field: pathOf([...segments, key, i]), family, id });
      });
      continue;
    }
    if (key === 'container' && typeof v === 'string' && record.type === 'code_interpreter') {
      out.push({ field: pathOf([...segments, key]), family: 'container', id: v });
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    segments.push(key);
    walk(v, segments, out, depth + 1);
    segments.pop();
  }
}

/** `messages[2].content[0].file.file_id` and the id it names, for every file id in the messages' content. */
export function contentFileReferences(messages: readonly { content?: unknown }[]): Reference[] {
  const out: Reference[] = [];
  for (let i = 0; i < messages.length; i++) {
    const content = messages[i]!.content;
    // Plain-text content (the common case) is skipped without a walk.
    if (typeof content !== 'object' || content === null) continue;
    walk(content, ['messages', i, 'content'], out, 0);
  }
  return out;
}

/** Every owned object a JSON body names, its fields under `root` (`file[line 3].body`). */
export function bodyReferences(body: Record<string, unknown>, root: string): Reference[] {
  const out: Reference[] = [];
  walk(body, [root], out, 0);
  return out;
}
