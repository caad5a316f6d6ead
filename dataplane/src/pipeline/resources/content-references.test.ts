import { describe, expect, it } from 'vitest';
import { bodyReferences, contentFileReferences } from './content-references.ts';

describe('contentFileReferences', () => {
  it('finds nothing in plain conversations', () => {
    expect(
      contentFileReferences([
        { content: 'hello' },
        { content: [{ type: 'text', text: 'file_id is just text here' }] },
        { content: null },
      ]),
    ).toEqual([]);
  });

  it('names every file id in content by its field path, however deep', () => {
    const refs = contentFileReferences([
      { content: 'system' },
      {
        content: [
          { type: 'text', text: 'x' },
          { type: 'file', file: { file_id: 'file-a' } },
        ],
      },
      {
        content: [
          {
            type: 'document',
            source: { type: 'content', content: [{ source: { type: 'file', file_id: 'file-b' } }] },
          },
        ],
      },
    ]);
    expect(refs).toEqual([
      { field: 'messages[1].content[1].file.file_id', family: 'file', id: 'file-a' },
      { field: 'messages[2].content[0].source.content[0].source.file_id', family: 'file', id: 'file-b' },
    ]);
  });

  it('ignores a file_id that is not a string', () => {
    expect(contentFileReferences([{ content: [{ type: 'file', file: { file_id: 7 } }] }])).toEqual([]);
  });
});

describe('bodyReferences', () => {
  it('names file ids, file and vector store lists, and code interpreter containers', () => {
    const refs = bodyReferences(
      {
        input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-a' }] }],
        tools: [
          { type: 'file_search', vector_store_ids: ['vs_1'] },
          { type: 'code_interpreter', container: 'cntr_1' },
          { type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-b'] } },
        ],
        metadata: { container: 'not a reference' },
        constructor: ['not a list of ids'],
      },
      'file[line 1].body',
    );
    expect(refs).toEqual([
      { field: 'file[line 1].body.input[0].content[0].file_id', family: 'file', id: 'file-a' },
      { field: 'file[line 1].body.tools[0].vector_store_ids[0]', family: 'vector_store', id: 'vs_1' },
      { field: 'file[line 1].body.tools[1].container', family: 'container', id: 'cntr_1' },
      { field: 'file[line 1].body.tools[2].container.file_ids[0]', family: 'file', id: 'file-b' },
    ]);
  });

  it('finds a file id nested past any content part shape (depth 40), not only the first 32 levels', () => {
    let v: Record<string, unknown> = { file_id: 'file-foreign' };
    for (let i = 0; i < 40; i++) v = { x: v };
    const refs = contentFileReferences([{ content: [v] }]);
    expect(refs.map((r) => r.id)).toEqual(['file-foreign']);
    expect(refs[0]!.field).toBe(`messages[0].content[0]${'.x'.repeat(40)}.file_id`);
  });

  it('refuses (400 naming the path) a body deeper than any depth limit, instead of skipping its ids', () => {
    let v: Record<string, unknown> = { file_id: 'file-foreign' };
    for (let i = 0; i < 1100; i++) v = { x: v };
    let caught: unknown;
    try {
      bodyReferences(v, 'file[line 1].body');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({
      status: 400,
      message: expect.stringContaining('nesting depth exceeds 1000'),
    });
    expect((caught as { param: string }).param).toMatch(/^file\[line 1\]\.body(\.x)+$/);
  });
});
