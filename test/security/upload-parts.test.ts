/**
 * An upload naming one file field twice: the route takes one file, so the second is refused
 * (400 naming the field) instead of being buffered in full and silently dropped while the
 * caller is told its upload succeeded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startResourceStack, type ResourceStack } from '../harness/resources.ts';

let s: ResourceStack;

beforeAll(async () => {
  s = await startResourceStack('upload-parts');
});
afterAll(() => s.close());

const upload = (form: FormData) =>
  fetch(`${s.stack.baseURL}/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.keys.owner}` },
    body: form,
  });

describe('a multipart upload', () => {
  it('with two files in the one-file field is a 400 naming the field, and nothing is stored', async () => {
    const form = new FormData();
    form.set('purpose', 'assistants');
    form.append('file', new Blob([Buffer.from('first')]), 'a.txt');
    form.append('file', new Blob([Buffer.from('second, longer')]), 'b.txt');
    const before = s.upstreamCalls();
    const res = await upload(form);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 400, param: 'file' });
    expect(String(body.error.message)).toContain('one file');
    expect(s.upstreamCalls()).toBe(before);
    expect((await s.owner.files.list()).data).toEqual([]);
  });

  it('with one file is stored as sent', async () => {
    const form = new FormData();
    form.set('purpose', 'assistants');
    form.append('file', new Blob([Buffer.from('only')]), 'a.txt');
    const res = await upload(form);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ object: 'file', bytes: 4, filename: 'a.txt' });
  });
});
