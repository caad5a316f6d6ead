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
    // 16 nines read back as 1e16 (past 2^53 every neighbour rounds alike, so comparing them
    // proves nothing): the head's length is checked at 16 digits, the value at the largest
    // exact one, which has 16 digits too.
    expect(`{"conversationBytes":${'9'.repeat(16)},`.length).toBeLessThanOrEqual(SIZE_HEAD_CHARS);
    const largest = Number.MAX_SAFE_INTEGER;
    expect(String(largest)).toHaveLength(16);
    expect(recordedBytes(`{"conversationBytes":${largest},`)).toBe(largest);
    expect(recordedBytes(`{"conversationBytes":${largest - 1},`)).toBe(largest - 1);
  });

  it('finds no size in a record stored without one', () => {
    expect(recordedBytes('{"interaction":{},"conversation":[]}')).toBeUndefined();
  });
});
