/**
 * A response's input as the list `GET /v1/responses/{id}/input_items` returns: every item
 * with an id and an explicit type, string contents as one `input_text` part, paged by id.
 */
import type { InputItem, ResponsesRequest } from './types.ts';

export type ListedItem = Record<string, unknown> & { id: string; type: string };

/** The items of one request's `input`, normalised once when the response is stored. */
export function listedItems(input: ResponsesRequest['input'], responseId: string): ListedItem[] {
  const items: InputItem[] = typeof input === 'string' ? [{ role: 'user', content: input }] : (input ?? []);
  const base = responseId.replace(/^resp_/, '');
  return items.map((item, i) => {
    const type = item.type ?? 'message';
    const id = typeof item.id === 'string' && item.id !== '' ? item.id : `${prefixOf(type)}_${base}i${i}`;
    if (type !== 'message' || !('content' in item)) return { ...item, type, id };
    const content =
      typeof item.content === 'string'
        ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }]
        : item.content;
    return { ...item, type, id, content, status: 'completed' };
  });
}

const prefixOf = (type: string): string =>
  type === 'message'
    ? 'msg'
    : type === 'function_call'
      ? 'fc'
      : type === 'function_call_output'
        ? 'fco'
        : 'item';

export interface ItemPageQuery {
  limit: number;
  order: 'asc' | 'desc';
  after?: string | undefined;
}

/** One cursor page: items after `after` in the requested order (OpenAI's default is newest first). */
export function itemPage(
  items: readonly ListedItem[],
  q: ItemPageQuery,
): {
  object: 'list';
  data: ListedItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
} {
  const ordered = q.order === 'asc' ? [...items] : [...items].reverse();
  const start = q.after === undefined ? 0 : ordered.findIndex((it) => it.id === q.after) + 1;
  // An unknown cursor lists nothing rather than starting over.
  const from = q.after !== undefined && start === 0 ? ordered.length : start;
  const data = ordered.slice(from, from + q.limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: from + data.length < ordered.length,
  };
}
