import { describe, expect, it } from 'vitest';
import { contentFileReferences } from './content-references.ts';

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
