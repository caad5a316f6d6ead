import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { distinctReferences, MAX_REFERENCED_OBJECTS } from './owned.ts';
import type { Reference } from './references.ts';

const ref = (id: string, field: string, family: Reference['family'] = 'file'): Reference => ({
  family,
  id,
  field,
});

describe('distinctReferences', () => {
  it('keeps the first mention of each object, in order', () => {
    const refs = [
      ref('a', 'f0'),
      ref('b', 'f1'),
      ref('a', 'f2'),
      ref('a', 'f3', 'vector_store'),
      ref('b', 'f4'),
    ];
    expect(distinctReferences(refs)).toEqual([refs[0], refs[1], refs[3]]);
  });

  it('counts 200,000 mentions of one id as one object', () => {
    const refs = Array.from({ length: 200_000 }, (_, i) => ref('file-x', `f${i}`));
    expect(distinctReferences(refs)).toEqual([refs[0]]);
  });

  it('refuses the first distinct object past the bound, naming its field', () => {
    const refs = Array.from({ length: MAX_REFERENCED_OBJECTS + 5 }, (_, i) => ref(`file-${i}`, `f${i}`));
    expect(distinctReferences(refs.slice(0, MAX_REFERENCED_OBJECTS))).toHaveLength(MAX_REFERENCED_OBJECTS);
    const err = (() => {
      try {
        distinctReferences(refs);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 400, param: `f${MAX_REFERENCED_OBJECTS}` });
  });
});
