/**
 * Object ids named inside bodies get the bound ids in paths get (256 characters): a longer one
 * is no object's id, so it is a 400 naming the field before any store lookup, not a lookup of
 * a megabyte key answered by a 404 that echoes the megabyte back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL, startResourceStack, type ResourceStack } from '../harness/resources.ts';

let s: ResourceStack;

beforeAll(async () => {
  s = await startResourceStack('long-ids');
});
afterAll(() => s.close());

const LONG = 'f'.repeat(1_000_000);

async function post(path: string, body: unknown) {
  const res = await fetch(`${s.stack.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.keys.owner}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, error: (JSON.parse(text) as { error: Record<string, unknown> }).error };
}

describe('an id named in a body longer than 256 characters', () => {
  it.each([
    ['/batches', { input_file_id: LONG, endpoint: '/v1/chat/completions' }, 'input_file_id'],
    ['/vector_stores', { file_ids: ['file-ok', LONG] }, 'file_ids[1]'],
    [
      '/assistants',
      { model: MODEL, tool_resources: { file_search: { vector_store_ids: [LONG] } } },
      'tool_resources.file_search.vector_store_ids[0]',
    ],
    [
      '/chat/completions',
      { model: MODEL, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: LONG } }] }] },
      'messages[0].content[0].file.file_id',
    ],
  ])('%s is a short 400 naming the field, and nothing reaches the provider', async (path, body, param) => {
    const before = s.upstreamCalls();
    const res = await post(path, body);
    expect(res.status).toBe(400);
    expect(res.error).toMatchObject({ type: 'invalid_request_error', code: 400, param });
    expect(String(res.error.message)).toContain('256');
    expect(res.text.length).toBeLessThan(1_000);
    expect(s.upstreamCalls()).toBe(before);
  });

  it('at 256 characters is still looked up: the 404 of an unknown id', async () => {
    const res = await post('/batches', { input_file_id: 'f'.repeat(256), endpoint: '/v1/chat/completions' });
    expect(res.status).toBe(404);
    expect(res.error).toMatchObject({ param: 'input_file_id' });
  });
});
