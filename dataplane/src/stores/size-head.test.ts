import { describe, expect, it } from 'vitest';
import { recordedBytes, SIZE_HEAD_CHARS, withSizeHead } from './size-head.ts';

describe('a record with its conversation size at its head', () => {
  it('records the conversation’s UTF-8 bytes where the head is read, the members before it', () => {
    const conversation = [{ role: 'user', content: 'ü😀'.repeat(50) }];
    const json = withSizeHead({ interaction: { id: 'int_1', text: 'é' }, skipped: undefined }, conversation);
    expect(recordedBytes(json.slice(0, SIZE_HEAD_CHARS))).toBe(
      Buffer.byteLength(JSON.stringify(conversation)),
    );
    expect(JSON.parse(json)).toEqual({
      conversationBytes: Buffer.byteLength(JSON.stringify(conversation)),
      interaction: { id: 'int_1', text: 'é' },
      conversation,
    });
    expect(Object.keys(JSON.parse(json) as object)).toEqual([
      'conversationBytes',
      'interaction',
      'conversation',
    ]);
  });

  it('the head holds the largest size recorded', () => {
    const head = `{"conversationBytes":${'9'.repeat(16)},`;
    expect(head.length).toBeLessThanOrEqual(SIZE_HEAD_CHARS);
    expect(recordedBytes(head)).toBe(9_999_999_999_999_999);
  });

  it('finds no size in a record stored without one', () => {
    expect(recordedBytes('{"interaction":{},"conversation":[]}')).toBeUndefined();
  });
});
