/**
 * Vector stores (files, search priced per search), assistants (client.beta.assistants) and
 * containers (client.containers) through the official client: shapes, charges against the
 * key's budget, and the 404 another key or tenant gets on ids, lists and referenced ids.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  costMicros,
  failure,
  FILES_ONLY_MODEL,
  MODEL,
  PRICES,
  startResourceStack,
  status,
  UPSTREAM_MODEL,
  type ResourceStack,
} from '../harness/resources.ts';

let s: ResourceStack;
let paris: string;
let bananas: string;
let siblingFile: string;

beforeAll(async () => {
  s = await startResourceStack('stores');
  const upload = async (client: typeof s.owner, text: string, name: string) =>
    (await client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' })).id;
  paris = await upload(s.owner, 'Paris is the capital of France.', 'paris.txt');
  bananas = await upload(s.owner, 'Bananas are yellow fruit.', 'bananas.txt');
  siblingFile = await upload(s.sibling, 'The sibling key wrote this.', 'sibling.txt');
});
afterAll(() => s.close());

/** Every call by another key or tenant is a 404, and none reaches the provider. */
async function othersGet404(calls: (client: typeof s.owner) => (() => Promise<unknown>)[]): Promise<void> {
  const before = s.upstreamCalls();
  for (const client of [s.sibling, s.other])
    for (const call of calls(client)) expect(await status(call())).toBe(404);
  expect(s.upstreamCalls()).toBe(before);
}

describe('vector stores', () => {
  it('creates from owned files, searches (charged per search), manages files, updates and deletes', async () => {
    const vs = await s.owner.vectorStores.create({ name: 'facts', file_ids: [paris] });
    expect(vs).toMatchObject({ object: 'vector_store', name: 'facts', status: 'completed' });
    expect(vs.file_counts.total).toBe(1);

    const spent = await s.spentMicros();
    const { data: page, response } = await s.owner.vectorStores
      .search(vs.id, { query: 'capital of France' })
      .withResponse();
    expect(page.data[0]).toMatchObject({ file_id: paris, filename: 'paris.txt' });
    expect(page.data[0]!.content[0]!.text).toContain('Paris');
    expect(costMicros(response.headers)).toBe(Math.round(PRICES.perSearch * 1e6));
    expect((await s.spentMicros()) - spent).toBe(costMicros(response.headers));

    const attached = await s.owner.vectorStores.files.create(vs.id, { file_id: bananas });
    expect(attached).toMatchObject({ id: bananas, object: 'vector_store.file', vector_store_id: vs.id });
    const files = await s.owner.vectorStores.files.list(vs.id);
    expect(files.data.map((f) => f.id).sort()).toEqual([bananas, paris].sort());
    expect((await s.owner.vectorStores.files.retrieve(bananas, { vector_store_id: vs.id })).id).toBe(bananas);

    await othersGet404((c) => [
      () => c.vectorStores.retrieve(vs.id),
      () => c.vectorStores.update(vs.id, { name: 'stolen' }),
      () => c.vectorStores.search(vs.id, { query: 'capital' }),
      () => c.vectorStores.files.list(vs.id),
      () => c.vectorStores.files.retrieve(paris, { vector_store_id: vs.id }),
      () => c.vectorStores.files.delete(paris, { vector_store_id: vs.id }),
      () => c.vectorStores.delete(vs.id),
      // The owner's files, referred to in another caller's bodies.
      () => c.vectorStores.create({ name: 'x', file_ids: [paris] }),
    ]);
    expect((await s.spentMicros()) - spent).toBe(costMicros(response.headers));
    for (const c of [s.sibling, s.other]) expect((await c.vectorStores.list()).data).toEqual([]);
    // The owner cannot attach a file that is not its own either.
    const foreign = await failure(s.owner.vectorStores.files.create(vs.id, { file_id: siblingFile }));
    expect(foreign.status).toBe(404);
    expect(foreign.error).toMatchObject({ param: 'file_id' });

    expect((await s.owner.vectorStores.update(vs.id, { name: 'renamed' })).name).toBe('renamed');
    expect((await s.owner.vectorStores.list()).data.map((v) => v.id)).toContain(vs.id);
    expect(await s.owner.vectorStores.files.delete(bananas, { vector_store_id: vs.id })).toMatchObject({
      deleted: true,
    });
    expect(await s.owner.vectorStores.delete(vs.id)).toMatchObject({ id: vs.id, deleted: true });
    expect(await status(s.owner.vectorStores.retrieve(vs.id))).toBe(404);
  });
});

describe('assistants', () => {
  it('creates on the model named, shows the gateway model name, and stays with its owner', async () => {
    const vs = await s.owner.vectorStores.create({ name: 'kb', file_ids: [paris] });
    const assistant = await s.owner.beta.assistants.create({
      model: MODEL,
      name: 'helper',
      instructions: 'Be brief.',
      tools: [{ type: 'file_search' }],
      tool_resources: { file_search: { vector_store_ids: [vs.id] } },
    });
    expect(assistant).toMatchObject({ object: 'assistant', model: MODEL, name: 'helper' });
    const sent = s.stack.fakes[0]!.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: UPSTREAM_MODEL });
    expect(sent.headers['openai-beta']).toContain('assistants=v2');

    expect((await s.owner.beta.assistants.retrieve(assistant.id)).model).toBe(MODEL);
    expect((await s.owner.beta.assistants.update(assistant.id, { name: 'renamed' })).name).toBe('renamed');
    expect((await s.owner.beta.assistants.list()).data.map((a) => a.id)).toContain(assistant.id);

    await othersGet404((c) => [
      () => c.beta.assistants.retrieve(assistant.id),
      () => c.beta.assistants.update(assistant.id, { name: 'x' }),
      () => c.beta.assistants.delete(assistant.id),
      () =>
        c.beta.assistants.create({
          model: MODEL,
          tool_resources: { file_search: { vector_store_ids: [vs.id] } },
        }),
    ]);
    for (const c of [s.sibling, s.other]) expect((await c.beta.assistants.list()).data).toEqual([]);
    const moved = await failure(s.owner.beta.assistants.update(assistant.id, { model: 'chat-only' }));
    expect(moved.status).toBe(400);
    expect(moved.error).toMatchObject({ param: 'model' });
    const noCapability = await failure(s.owner.beta.assistants.create({ model: 'chat-only' }));
    expect(noCapability.error).toMatchObject({ param: 'model' });
    expect(String(noCapability.error.message)).toContain('assistants capability');

    expect(await s.owner.beta.assistants.delete(assistant.id)).toMatchObject({ deleted: true });
    expect(await status(s.owner.beta.assistants.retrieve(assistant.id))).toBe(404);
  });
});

describe('containers', () => {
  it('creates with owned files, uploads and copies files, downloads, and stays with its owner', async () => {
    const container = await s.owner.containers.create({ name: 'sandbox', file_ids: [paris] });
    expect(container).toMatchObject({ object: 'container', name: 'sandbox', status: 'running' });
    const uploaded = await s.owner.containers.files.create(container.id, {
      file: await toFile(Buffer.from('print(1)'), 'main.py'),
    });
    expect(uploaded).toMatchObject({
      object: 'container.file',
      container_id: container.id,
      path: '/mnt/data/main.py',
    });
    const copied = await s.owner.containers.files.create(container.id, { file_id: bananas });
    expect(copied.path).toBe('/mnt/data/bananas.txt');
    const listed = await s.owner.containers.files.list(container.id);
    expect(listed.data).toHaveLength(3);
    expect((await s.owner.containers.files.retrieve(uploaded.id, { container_id: container.id })).bytes).toBe(
      8,
    );
    const content = await s.owner.containers.files.content.retrieve(uploaded.id, {
      container_id: container.id,
    });
    expect(await content.text()).toBe('print(1)');

    await othersGet404((c) => [
      () => c.containers.retrieve(container.id),
      () => c.containers.delete(container.id),
      () => c.containers.files.list(container.id),
      () => c.containers.files.retrieve(uploaded.id, { container_id: container.id }),
      () => c.containers.files.content.retrieve(uploaded.id, { container_id: container.id }),
      () => c.containers.files.delete(uploaded.id, { container_id: container.id }),
      () => c.containers.create({ name: 'x', file_ids: [paris] }),
    ]);
    for (const c of [s.sibling, s.other]) expect((await c.containers.list()).data).toEqual([]);
    const foreign = await failure(s.owner.containers.files.create(container.id, { file_id: siblingFile }));
    expect(foreign.status).toBe(404);
    expect(foreign.error).toMatchObject({ param: 'file_id' });

    expect((await s.owner.containers.list()).data.map((c) => c.id)).toContain(container.id);
    await s.owner.containers.files.delete(uploaded.id, { container_id: container.id });
    expect((await s.owner.containers.files.list(container.id)).data).toHaveLength(2);
    await s.owner.containers.delete(container.id);
    expect(await status(s.owner.containers.retrieve(container.id))).toBe(404);
  });
});

describe('placement', () => {
  it('follows the x-gantry-model header, and keeps objects used together on one deployment', async () => {
    const elsewhere = await s.owner.files
      .create(
        { file: await toFile(Buffer.from('kept elsewhere'), 'e.txt'), purpose: 'assistants' },
        { headers: { 'x-gantry-model': FILES_ONLY_MODEL } },
      )
      .withResponse();
    expect(elsewhere.response.headers.get('x-gantry-provider')).toBe('files-only');
    const alone = await failure(s.owner.vectorStores.create({ file_ids: [elsewhere.data.id] }));
    expect(alone.status).toBe(400);
    expect(alone.error).toMatchObject({ param: 'file_ids[0]' });
    expect(String(alone.error.message)).toContain('vector_stores capability');
    const mixed = await failure(s.owner.vectorStores.create({ file_ids: [paris, elsewhere.data.id] }));
    expect(mixed.status).toBe(400);
    expect(mixed.error).toMatchObject({ param: 'file_ids[1]' });
    const noSuchModel = await failure(
      s.owner.files.create(
        { file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants' },
        { headers: { 'x-gantry-model': 'chat-only' } },
      ),
    );
    expect(noSuchModel.status).toBe(400);
    expect(noSuchModel.error).toMatchObject({ param: 'model' });
  });
});
