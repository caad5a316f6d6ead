import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import type { UpstreamTarget } from '../types.ts';
import { geminiAdapter } from './index.ts';

const target: UpstreamTarget = {
  provider: 'gemini',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  upstreamModel: 'gemini-embedding-001',
  apiKey: 'k',
  prefill: false,
};
const embeddings = geminiAdapter.embeddings;
if (!embeddings) throw new Error('gemini adapter must support embeddings');

describe('gemini embeddings', () => {
  it('builds one batchEmbedContents request per input', () => {
    const r = embeddings.request({ model: 'embed', input: ['alpha', 'beta'], dimensions: 768 }, target);
    expect(r.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents',
    );
    expect(r.headers['x-goog-api-key']).toBe('k');
    expect(JSON.parse(r.body ?? '')).toEqual({
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'alpha' }] },
          outputDimensionality: 768,
        },
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'beta' }] },
          outputDimensionality: 768,
        },
      ],
    });
  });

  it('accepts a single string', () => {
    const r = embeddings.request({ model: 'embed', input: 'solo' }, target);
    expect(JSON.parse(r.body ?? '')).toEqual({
      requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'solo' }] } }],
    });
  });

  it('rejects token arrays and empty input', () => {
    expect(() => embeddings.request({ model: 'e', input: [1, 2, 3] }, target)).toThrow(GatewayError);
    expect(() => embeddings.request({ model: 'e', input: [[1, 2]] }, target)).toThrow(GatewayError);
    expect(() => embeddings.request({ model: 'e', input: [] }, target)).toThrow(GatewayError);
  });

  it('maps the response in order', () => {
    const out = embeddings.response({ embeddings: [{ values: [0.1, 0.2] }, { values: [0.3] }] }, target);
    expect(out).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
        { object: 'embedding', index: 1, embedding: [0.3] },
      ],
      model: 'gemini-embedding-001',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
    expect(() => embeddings.response({ error: 'x' }, target)).toThrow(GatewayError);
  });
});
