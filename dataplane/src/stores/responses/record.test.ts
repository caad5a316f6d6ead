import { describe, expect, it } from 'vitest';
import type { ResponseObject } from '../../formats/responses/types.ts';
import { encodeRecord, parseResponse, RECORD_HEAD_CHARS, recordedBytes, responseSpan } from './record.ts';

const entry = {
  response: { id: 'resp_1', output: [{ text: 'é 😀' }] } as unknown as ResponseObject,
  conversation: [{ role: 'user' as const, content: 'ü'.repeat(100) }],
};

describe('the stored record', () => {
  it('says in its head where the response lies, the same in characters and bytes', () => {
    const json = encodeRecord(entry);
    const head = json.slice(0, RECORD_HEAD_CHARS);
    expect(recordedBytes(head)).toBe(Buffer.byteLength(JSON.stringify(entry.conversation)));
    const span = responseSpan(head)!;
    expect(parseResponse(json.slice(span.start, span.end))).toEqual(entry.response);
    // Redis cuts by bytes: everything up to the response's end is ASCII.
    const bytes = Buffer.from(json, 'utf8').subarray(span.start, span.end).toString('utf8');
    expect(parseResponse(bytes)).toEqual(entry.response);
    expect(JSON.parse(json)).toMatchObject(entry);
  });

  it('finds no response span in entries of an older layout (they are read whole)', () => {
    const older = `{"conversationBytes":5,"response":${JSON.stringify(entry.response)},"conversation":[]}`;
    expect(responseSpan(older.slice(0, RECORD_HEAD_CHARS))).toBeUndefined();
    expect(recordedBytes(older)).toBe(5);
    expect(responseSpan(JSON.stringify(entry).slice(0, RECORD_HEAD_CHARS))).toBeUndefined();
  });
});
