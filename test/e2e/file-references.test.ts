/**
 * Uploaded files named inside conversations: a chat content part, an Anthropic block passed
 * through verbatim, and the Responses API's file positions. Another key's or another
 * tenant's file id is the 404 of an unknown id naming the field, with no upstream call; the
 * owner's id reaches the deployment holding the file.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REFERENCED_OBJECTS } from '../../dataplane/src/pipeline/resources/owned.ts';
import {
  failure,
  MODEL,
  startResourceStack,
  UPSTREAM_MODEL,
  type ResourceStack,
} from '../harness/resources.ts';

let s: ResourceStack;
let fileId: string;

beforeAll(async () => {
  s = await startResourceStack('fileref');
  const file = await s.owner.files.create({
    file: await toFile(Buffer.from('%PDF-1.4 notes'), 'notes.pdf'),
    purpose: 'user_data',
  });
  fileId = file.id;
});
afterAll(() => s.close());

const chatWithFile = (id: string, model = MODEL) => ({
  model,
  messages: [
    { role: 'system' as const, content: 'Be brief.' },
    {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'Summarise the file.' },
        { type: 'file' as const, file: { file_id: id } },
      ],
    },
  ],
});

const FIELD = 'messages[1].content[1].file.file_id';

describe('chat content naming an uploaded file', () => {
  it('is a 404 naming the field for another key or tenant, with no upstream call', async () => {
    const before = s.upstreamCalls();
    for (const client of [s.sibling, s.other]) {
      const err = await failure(client.chat.completions.create(chatWithFile(fileId)));
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: 'not_found', code: 404, param: FIELD });
      expect(String(err.error.message)).toContain(fileId);
    }
    expect(s.upstreamCalls()).toBe(before);
  });

  it("reaches the deployment holding the owner's file", async () => {
    const before = s.upstreamCalls();
    const { data, response } = await s.owner.chat.completions.create(chatWithFile(fileId)).withResponse();
    expect(data.choices[0]?.message.role).toBe('assistant');
    expect(response.headers.get('x-gantry-provider')).toBe('holder');
    const calls = s.stack.fakes[0]!.requests.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ path: '/v1/chat/completions', body: { model: UPSTREAM_MODEL } });
    expect(JSON.stringify(calls[0]!.body)).toContain(fileId);
  });

  it('is a 400 naming the field when the requested model is not served where the file is', async () => {
    const before = s.upstreamCalls();
    const err = await failure(s.owner.chat.completions.create(chatWithFile(fileId, 'chat-only')));
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ param: FIELD });
    expect(String(err.error.message)).toContain(MODEL);
    expect(s.upstreamCalls()).toBe(before);
  });

  it('counts a file named in many parts once, and refuses more distinct objects than the bound', async () => {
    // Messages of at most 500 parts (the schema allows 512 per message, 4,096 messages).
    const parts = (ids: string[]) => ({
      model: MODEL,
      messages: Array.from({ length: Math.ceil(ids.length / 500) }, (_, m) => ({
        role: 'user' as const,
        content: ids
          .slice(m * 500, m * 500 + 500)
          .map((id) => ({ type: 'file' as const, file: { file_id: id } })),
      })),
    });
    // One id repeated in 600 parts over two messages is one object: served like a single mention.
    const { response } = await s.owner.chat.completions
      .create(parts(Array.from({ length: 600 }, () => fileId)))
      .withResponse();
    expect(response.headers.get('x-gantry-provider')).toBe('holder');
    // Past the bound of distinct objects: a 400 naming the first one over it, nothing upstream.
    const before = s.upstreamCalls();
    const ids = Array.from({ length: MAX_REFERENCED_OBJECTS + 1 }, (_, i) =>
      i === 0 ? fileId : `file-x${i}`,
    );
    const err = await failure(s.owner.chat.completions.create(parts(ids)));
    expect(err).toMatchObject({
      status: 400,
      error: { param: `messages[0].content[${MAX_REFERENCED_OBJECTS}].file.file_id` },
    });
    expect(String(err.error.message)).toContain(`at most ${MAX_REFERENCED_OBJECTS} distinct`);
    expect(s.upstreamCalls()).toBe(before);
  });

  it('is a 404 for an id nobody owns', async () => {
    const err = await failure(s.owner.chat.completions.create(chatWithFile('file-nobody')));
    expect(err).toMatchObject({ status: 404, error: { param: FIELD } });
  });
});

/** Raw POST with a key; the status and SPEC.md error body. */
async function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.stack.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { error?: Record<string, unknown> };
  return { status: res.status, error: json.error ?? {} };
}

describe('Anthropic /v1/messages naming an uploaded file', () => {
  const message = (id: string, nested: boolean) => ({
    model: MODEL,
    max_tokens: 32,
    messages: [
      {
        role: 'user',
        content: [
          nested
            ? {
                type: 'document',
                // A content document passes through verbatim: its nested blocks are checked too.
                source: {
                  type: 'content',
                  content: [{ type: 'image', source: { type: 'file', file_id: id } }],
                },
              }
            : { type: 'document', source: { type: 'file', file_id: id } },
          { type: 'text', text: 'What is in it?' },
        ],
      },
    ],
  });

  it("is a 404 for another key's or tenant's file nested in a document, with no upstream call", async () => {
    const before = s.upstreamCalls();
    for (const key of [s.keys.sibling, s.keys.other]) {
      const err = await post('/messages', key, message(fileId, true));
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ param: 'messages[0].content[0].source.content[0].source.file_id' });
    }
    expect(s.upstreamCalls()).toBe(before);
  });

  it('refuses a file source block (Files API) with a 400 before any lookup or upstream call', async () => {
    const before = s.upstreamCalls();
    for (const key of [s.keys.owner, s.keys.other]) {
      const err = await post('/messages', key, message(fileId, false));
      expect(err.status).toBe(400);
      expect(String(err.error.param)).toMatch(/^messages\[0\]\.content\[0\]/);
    }
    expect(s.upstreamCalls()).toBe(before);
  });
});

describe('Responses API positions that name uploaded objects', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      'input_file',
      { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'X' }] }] },
      /^input\[0\]\.content\[0\]/,
    ],
    [
      'input_image',
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'X' }] }] },
      /^input\[0\]\.content\[0\]/,
    ],
    [
      'file_search',
      { input: 'hi', tools: [{ type: 'file_search', vector_store_ids: ['X'] }] },
      /^tools\[0\]/,
    ],
    [
      'code_interpreter',
      { input: 'hi', tools: [{ type: 'code_interpreter', container: 'X' }] },
      /^tools\[0\]/,
    ],
  ];

  it.each(cases)('%s is refused (400) for everyone, before any upstream call', async (_, body, param) => {
    const before = s.upstreamCalls();
    for (const key of [s.keys.owner, s.keys.sibling, s.keys.other]) {
      const json = JSON.parse(JSON.stringify({ model: MODEL, ...body }).replaceAll('"X"', `"${fileId}"`));
      const err = await post('/responses', key, json);
      expect(err.status).toBe(400);
      expect(String(err.error.param)).toMatch(param);
    }
    expect(s.upstreamCalls()).toBe(before);
  });
});

describe('batch input files naming uploaded objects', () => {
  const line = (id: string, body: Record<string, unknown>, url = '/v1/chat/completions') =>
    JSON.stringify({ custom_id: id, method: 'POST', url, body: { model: MODEL, ...body } });
  const chatLine = (id: string, file: string) =>
    line(id, { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: file } }] }] });
  const upload = async (client: ResourceStack['owner'], lines: string[]) =>
    client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });

  it("is a 404 naming the line and field for another key's or tenant's id, with no upstream call", async () => {
    const before = s.upstreamCalls();
    for (const client of [s.sibling, s.other]) {
      const err = await failure(upload(client, [line('plain', { messages: [] }), chatLine('f', fileId)]));
      expect(err).toMatchObject({
        status: 404,
        error: { type: 'not_found', param: 'file[line 2].body.messages[0].content[0].file.file_id' },
      });
    }
    const store = await s.owner.vectorStores.create({ name: 'mine' });
    const responsesLine = line(
      'r',
      { input: 'hi', tools: [{ type: 'file_search', vector_store_ids: [store.id] }] },
      '/v1/responses',
    );
    const calls = s.upstreamCalls();
    const err = await failure(upload(s.other, [responsesLine]));
    expect(err).toMatchObject({
      status: 404,
      error: { param: 'file[line 1].body.tools[0].vector_store_ids[0]' },
    });
    expect(s.upstreamCalls()).toBe(calls);
    expect(calls - before).toBe(1);
  });

  it("accepts the owner's ids and places the file where they are", async () => {
    const { data, response } = await s.owner.files
      .create({
        file: await toFile(Buffer.from(chatLine('mine', fileId)), 'in.jsonl'),
        purpose: 'batch',
      })
      .withResponse();
    expect(data.purpose).toBe('batch');
    expect(response.headers.get('x-gantry-provider')).toBe('holder');
  });
});
