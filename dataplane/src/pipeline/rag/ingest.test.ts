/**
 * What a caller is told when the RAG store will not keep a document: the per-index bound is
 * its own parameter error; a tenant past its quota gets OpenAI's 429 insufficient_quota; a
 * store full for every tenant is the gateway's 507.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { RagIndexFull, RagModelMismatch, RagStorageFull } from '../../stores/rag/types.ts';
import { storageRefusal } from './ingest.ts';

const body = (err: unknown) => {
  expect(err).toBeInstanceOf(GatewayError);
  return { status: (err as GatewayError).status, ...(err as GatewayError).toBody().error };
};

describe('ingest storage refusals', () => {
  it('names the bound that was reached, with a status a client can act on', () => {
    expect(body(storageRefusal(new RagIndexFull(5000, 4990), 'kb'))).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      param: 'index',
      message: expect.stringContaining('index kb: the index holds 4990 chunks and may hold at most 5000'),
    });
    expect(body(storageRefusal(new RagStorageFull('tenant', 10_000, 9_999, 2), 'kb'))).toMatchObject({
      status: 429,
      type: 'insufficient_quota',
      message: expect.stringContaining('tenant quota of 10000 chunks'),
    });
    expect(body(storageRefusal(new RagStorageFull('store', 25_000, 25_000, 1), 'kb'))).toMatchObject({
      status: 507,
      type: 'insufficient_storage',
      message: expect.stringContaining('RAG store is full; it cannot take 1 more chunks'),
    });
  });

  it('tells a tenant nothing of what every tenant together holds', () => {
    const { message } = body(storageRefusal(new RagStorageFull('store', 25_000, 24_321, 1_000, true), 'kb'));
    expect(message).not.toMatch(/25000|25,000|24321|24,321/);
    // The tenant's own bound is still named, with its own usage.
    expect(
      body(storageRefusal(new RagStorageFull('tenant', 10_000, 9_999, 2, true), 'kb')).message,
    ).toContain('hold 9999 chunks');
  });

  it('refuses a document whose index another ingest just created with another model', () => {
    expect(body(storageRefusal(new RagModelMismatch('kb', 'emb-a'), 'kb'))).toMatchObject({
      status: 400,
      param: 'embedding_model',
      message: expect.stringContaining('index kb was built with embedding model emb-a'),
    });
  });

  it('passes any other error through unchanged', () => {
    const other = new Error('milvus down');
    expect(storageRefusal(other, 'kb')).toBe(other);
  });
});
