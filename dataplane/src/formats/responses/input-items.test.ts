import { describe, expect, it } from 'vitest';
import { itemPage, listedItems } from './input-items.ts';

describe('listedItems', () => {
  it('gives every item an id and a type, and string contents one part', () => {
    const items = listedItems(
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
        { type: 'function_call_output', call_id: 'c', output: 'o', id: 'own' },
      ],
      'resp_abc',
    );
    expect(items).toEqual([
      {
        type: 'message',
        id: 'msg_abci0',
        role: 'user',
        status: 'completed',
        content: [{ type: 'input_text', text: 'q' }],
      },
      {
        type: 'message',
        id: 'msg_abci1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'a' }],
      },
      { type: 'function_call_output', call_id: 'c', output: 'o', id: 'own' },
    ]);
    expect(listedItems('hi', 'resp_x')).toHaveLength(1);
  });
});

describe('itemPage', () => {
  const items = ['a', 'b', 'c'].map((id) => ({ id, type: 'message' }));
  it('pages in either order after a cursor', () => {
    expect(itemPage(items, { limit: 2, order: 'desc' })).toMatchObject({
      data: [{ id: 'c' }, { id: 'b' }],
      first_id: 'c',
      last_id: 'b',
      has_more: true,
    });
    expect(itemPage(items, { limit: 2, order: 'asc', after: 'b' })).toMatchObject({
      data: [{ id: 'c' }],
      has_more: false,
    });
  });
  it('lists nothing after an unknown cursor rather than starting over', () => {
    expect(itemPage(items, { limit: 5, order: 'asc', after: 'zzz' })).toMatchObject({
      data: [],
      has_more: false,
    });
  });
});
