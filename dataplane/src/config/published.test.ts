import { describe, expect, it } from 'vitest';
import { compilePublished, PUBLISHED_FORMAT } from './published.ts';

const opts = { env: {}, source: 'secret gantry/snapshot', fakeBaseUrl: () => 'http://127.0.0.1:1' };
const doc = (fields: object) =>
  JSON.stringify({ format: PUBLISHED_FORMAT, version: 3, manifests: [], ...fields });
const errorsOf = (text: string) => {
  const r = compilePublished(text, opts);
  return r.ok ? [] : r.errors;
};

describe('compilePublished', () => {
  // A throw here ran inside the Secret informer's callback: at a pod's first list it ended
  // the watch for good (the pod never loaded a later, good snapshot).
  it('rejects JSON that is not an object instead of throwing', () => {
    expect(errorsOf('null')).toEqual(['secret gantry/snapshot: the snapshot must be a JSON object']);
    expect(errorsOf('[1]')).toEqual(['secret gantry/snapshot: the snapshot must be a JSON object']);
  });

  it('rejects a manifest that is not an object, naming its index', () => {
    expect(errorsOf(doc({ manifests: [null, 5] }))).toEqual([
      'secret gantry/snapshot: manifests[0] must be an object',
      'secret gantry/snapshot: manifests[1] must be an object',
    ]);
  });

  it('rejects credentials that are not a map of strings', () => {
    expect(errorsOf(doc({ credentials: 'sk-x' }))).toEqual([
      'secret gantry/snapshot: credentials must map deployment names to strings',
    ]);
    expect(errorsOf(doc({ credentials: { 'gpt-a': 5 } }))).toEqual([
      'secret gantry/snapshot: credentials must map deployment names to strings',
    ]);
  });

  it('still loads a well-formed empty snapshot', () => {
    const r = compilePublished(doc({ credentials: {} }), opts);
    expect(r.ok && r.snapshot.version).toBe(3);
  });
});
