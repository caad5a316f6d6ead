import { describe, expect, it } from 'vitest';
import { ragBoundsFromEnv } from './limits-env.ts';

describe('ragBoundsFromEnv', () => {
  it('reads the bounds that are set and leaves the rest to the store', () => {
    expect(
      ragBoundsFromEnv({ GANTRY_RAG_MAX_CHUNKS_PER_TENANT: '50000', GANTRY_RAG_MAX_CHUNKS_TOTAL: ' ' }),
    ).toEqual({
      perTenant: 50_000,
    });
    expect(ragBoundsFromEnv({})).toEqual({});
  });

  it('stops on a value that is not a whole positive number, naming the variable', () => {
    for (const bad of ['0', '-1', '2.5', '1e400', 'lots'])
      expect(() => ragBoundsFromEnv({ GANTRY_RAG_MAX_CHUNKS_TOTAL: bad })).toThrow(
        `GANTRY_RAG_MAX_CHUNKS_TOTAL must be a whole number above 0, got ${bad}`,
      );
  });
});
