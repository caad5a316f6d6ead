/** One behavioural suite for stored responses, run against the in-process and the Redis store. */
import { afterEach, describe, expect, it } from 'vitest';
import type { ResponseObject } from '../../formats/responses/types.ts';
import { backends, type StoreFixture } from '../testing/backends.ts';
import type { StoredResponse } from './types.ts';

const owner = { tenant: 'acme', keyHash: 'a1' };
const entry = (id: string): StoredResponse => ({
  response: { id, object: 'response', output: [] } as unknown as ResponseObject,
  conversation: [
    { role: 'user', content: `question ${id}` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
  ],
});

describe.each(backends)('response store ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('round-trips an entry for its owner only', async () => {
    fixture = await backend.create({});
    const { responses } = await fixture.open();
    await responses.put(owner, entry('resp_1'));
    const bytes = Buffer.byteLength(JSON.stringify(entry('resp_1').conversation));
    expect(await responses.get(owner, 'resp_1')).toMatchObject({
      ...entry('resp_1'),
      conversationBytes: bytes,
    });
    for (const other of [
      { tenant: 'acme', keyHash: 'b2' },
      { tenant: 'globex', keyHash: 'a1' },
    ]) {
      expect(await responses.get(other, 'resp_1')).toBeUndefined();
      expect(await responses.delete(other, 'resp_1')).toBe(false);
    }
    expect(await responses.delete(owner, 'resp_1')).toBe(true);
    expect(await responses.get(owner, 'resp_1')).toBeUndefined();
    expect(await responses.delete(owner, 'resp_1')).toBe(false);
  });

  it('reads only the recorded conversation size when it is past the size asked for', async () => {
    fixture = await backend.create({});
    const { responses } = await fixture.open();
    const e = entry('resp_big');
    e.conversation.push({ role: 'user', content: 'é'.repeat(1000) });
    await responses.put(owner, e);
    const bytes = Buffer.byteLength(JSON.stringify(e.conversation), 'utf8');
    expect(await responses.getWithin(owner, 'resp_big', bytes - 1)).toEqual({
      oversized: true,
      conversationBytes: bytes,
    });
    expect(await responses.getWithin(owner, 'resp_big', bytes)).toMatchObject({
      ...e,
      conversationBytes: bytes,
    });
    expect(await responses.getWithin(owner, 'resp_big', Infinity)).toMatchObject({
      ...e,
      conversationBytes: bytes,
    });
    expect(await responses.getWithin({ tenant: 'acme', keyHash: 'b2' }, 'resp_big', 0)).toBeUndefined();
    expect(await responses.getWithin(owner, 'resp_none', 0)).toBeUndefined();
  });

  it('reads a response alone, non-ASCII text included, without its conversation', async () => {
    fixture = await backend.create({});
    const { responses } = await fixture.open();
    const e = entry('resp_text');
    e.response = {
      ...e.response,
      output: [{ type: 'message', text: 'é 日本 😀 "q" \\ \u2028' }],
    } as unknown as ResponseObject;
    e.conversation.push({ role: 'user', content: 'x'.repeat(10_000) });
    await responses.put(owner, e);
    expect(await responses.getResponse(owner, 'resp_text')).toEqual(e.response);
    expect(await responses.get(owner, 'resp_text')).toMatchObject(e);
    expect(await responses.getResponse({ tenant: 'acme', keyHash: 'b2' }, 'resp_text')).toBeUndefined();
    expect(await responses.getResponse(owner, 'resp_none')).toBeUndefined();
  });

  it('keeps ids that look like key separators apart', async () => {
    fixture = await backend.create({});
    const { responses } = await fixture.open();
    await responses.put({ tenant: 'a', keyHash: 'b:c' }, entry('d'));
    expect(await responses.get({ tenant: 'a', keyHash: 'b' }, 'c:d')).toBeUndefined();
  });

  if (backend.name === 'redis')
    it('is shared between pods', async () => {
      fixture = await backend.create({});
      const [a, b] = [await fixture.open(), await fixture.open()];
      await a.responses.put(owner, entry('resp_shared'));
      expect((await b.responses.get(owner, 'resp_shared'))?.response.id).toBe('resp_shared');
    });
});
