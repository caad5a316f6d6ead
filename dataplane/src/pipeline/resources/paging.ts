/** OpenAI's cursor pages over the caller's own records: limit, after, before, order. Pure. */
import { invalidParam } from '../../errors.ts';
import type { OwnedRecord } from '../../stores/ownership/types.ts';

export interface ListQuery {
  limit: number;
  after: string | undefined;
  before: string | undefined;
  order: 'asc' | 'desc';
}

export const DEFAULT_LIST_LIMIT = 20;
/** Each listed object is read fresh from its deployment, so a page is bounded. */
export const MAX_LIST_LIMIT = 100;

export function parseListQuery(q: Record<string, unknown>): ListQuery {
  const raw = q.limit;
  let limit = DEFAULT_LIST_LIMIT;
  if (raw !== undefined) {
    limit = Number(raw);
    if (typeof raw !== 'string' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
      throw invalidParam('limit', `must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  }
  const order = q.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidParam('order', 'must be asc or desc');
  const cursor = (name: string) => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw invalidParam(name, 'must be an object id');
    return v;
  };
  return { limit, after: cursor('after'), before: cursor('before'), order };
}

/** `records` newest first (as the store lists them); a cursor that is not in the list starts nothing. */
export function pageOf(
  records: readonly OwnedRecord[],
  q: ListQuery,
): { records: OwnedRecord[]; hasMore: boolean } {
  let all = q.order === 'asc' ? [...records].reverse() : [...records];
  if (q.after !== undefined) {
    const at = all.findIndex((r) => r.id === q.after);
    all = at === -1 ? [] : all.slice(at + 1);
  }
  if (q.before !== undefined) {
    const at = all.findIndex((r) => r.id === q.before);
    all = at === -1 ? [] : all.slice(0, at);
    return { records: all.slice(-q.limit), hasMore: all.length > q.limit };
  }
  return { records: all.slice(0, q.limit), hasMore: all.length > q.limit };
}
