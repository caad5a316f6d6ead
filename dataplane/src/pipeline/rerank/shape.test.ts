import { describe, expect, it } from 'vitest';
import { unitCostUsd } from '../../accounting/unit-cost.ts';
import { UpstreamFailure } from '../../router/upstream.ts';
import { readUpstreamRerank, shapeResults } from './shape.ts';

describe('rerank answers', () => {
  it('reads Cohere, Jina (data, score) and usage dialects', () => {
    const cohere = readUpstreamRerank(
      { id: 'x', results: [{ index: 1, relevance_score: 0.5 }], meta: { billed_units: { search_units: 2 } } },
      2,
    );
    expect(cohere).toEqual({
      id: 'x',
      results: [{ index: 1, relevance_score: 0.5 }],
      searchUnits: 2,
      tokens: undefined,
    });
    const jina = readUpstreamRerank({ data: [{ index: 0, score: 0.25 }], usage: { total_tokens: 40 } }, 1);
    expect(jina.results).toEqual([{ index: 0, relevance_score: 0.25 }]);
    expect(jina.tokens).toBe(40);
  });

  it('blames the deployment for an index outside the documents sent', () => {
    expect(() => readUpstreamRerank({ results: [{ index: 3, relevance_score: 1 }] }, 3)).toThrow(
      UpstreamFailure,
    );
    expect(() => readUpstreamRerank({ nothing: true }, 3)).toThrow(/without results/);
  });

  it('sorts best first whatever order the upstream used, and cuts to top_n', () => {
    const req = {
      model: 'm',
      query: 'q',
      documents: ['a', { text: 'b' }, 'c'],
      top_n: 2,
      return_documents: true,
    };
    const out = shapeResults(
      [
        { index: 0, relevance_score: 0.1 },
        { index: 1, relevance_score: 0.9 },
        { index: 2, relevance_score: 0.5 },
      ],
      req,
    );
    expect(out).toEqual([
      { index: 1, relevance_score: 0.9, document: { text: 'b' } },
      { index: 2, relevance_score: 0.5, document: { text: 'c' } },
    ]);
  });

  it('prices searches in whole micro-dollars, never free when priced', () => {
    const pricing = { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perSearch: 0.002 };
    expect(unitCostUsd(pricing, { searches: 3 })).toBe(0.006);
    expect(unitCostUsd({ ...pricing, perSearch: 1e-9 }, { searches: 1 })).toBe(0.000001);
    expect(unitCostUsd({ inputPerMillionTokens: 1, outputPerMillionTokens: 1 }, { searches: 1 })).toBe(0);
  });
});
