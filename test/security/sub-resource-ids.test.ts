/**
 * The file id in `/v1/vector_stores/{id}/files/{file_id}` and `/v1/containers/{id}/files/{file_id}`
 * is the caller's to choose and is not looked up (its parent is): one that carries a path
 * (`../../files/<id>`, sent percent-encoded, one decoding step from another object of the
 * deployment's account) is the 404 of an unknown file, and nothing reaches the provider.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startResourceStack, type ResourceStack } from '../harness/resources.ts';

let s: ResourceStack;
let paths: string[];

beforeAll(async () => {
  s = await startResourceStack('sub-ids');
  const file = await s.owner.files.create({
    file: await toFile(Buffer.from('hello'), 'a.txt'),
    purpose: 'assistants',
  });
  const store = await s.owner.vectorStores.create({ name: 'v' });
  const container = await s.owner.containers.create({ name: 'c' });
  const forged = encodeURIComponent(`../../files/${file.id}`);
  paths = [
    `/vector_stores/${store.id}/files/${forged}`,
    `/containers/${container.id}/files/${forged}`,
    `/containers/${container.id}/files/${forged}/content`,
  ];
});
afterAll(() => s.close());

const call = (method: string, path: string) =>
  fetch(`${s.stack.baseURL}${path}`, { method, headers: { authorization: `Bearer ${s.keys.owner}` } });

describe('a sub-resource file id carrying a path', () => {
  it('is the 404 of an unknown file on GET and DELETE, without any upstream call', async () => {
    const before = s.upstreamCalls();
    for (const path of paths)
      for (const method of path.endsWith('/content') ? ['GET'] : ['GET', 'DELETE']) {
        const res = await call(method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(((await res.json()) as { error: unknown }).error).toMatchObject({
          type: 'not_found',
          param: 'file_id',
        });
      }
    expect(s.upstreamCalls()).toBe(before);
  });

  it('shaped like a provider id is still asked of the holder', async () => {
    const before = s.upstreamCalls();
    const res = await call('GET', paths[0]!.replace(/files\/[^/]+$/, 'files/file-unknown'));
    expect(res.status).toBe(404);
    expect(s.upstreamCalls()).toBe(before + 1);
  });

  it('counts against the rate limit like any other request', async () => {
    const store = await s.limited.vectorStores.create({ name: 'limited' });
    const forged = `/vector_stores/${store.id}/files/${encodeURIComponent('../../files/file-x')}`;
    const key = `Bearer ${s.keys.owner.replace('-owner', '-limited')}`;
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++)
      statuses.push((await fetch(`${s.stack.baseURL}${forged}`, { headers: { authorization: key } })).status);
    expect(statuses).toEqual([404, 429]);
  });
});
