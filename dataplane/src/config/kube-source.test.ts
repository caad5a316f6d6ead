import { describe, expect, it } from 'vitest';
import { neverThrows } from './kube-source.ts';

describe('the snapshot Secret callback', () => {
  it('turns a throwing load into a logged rejection, and later loads still run', () => {
    const rejected: string[] = [];
    const loaded: string[] = [];
    const callback = neverThrows(
      (text: string) => {
        if (text === 'null') throw new TypeError("Cannot read properties of null (reading 'format')");
        loaded.push(text);
      },
      (err) => rejected.push((err as Error).message),
    );
    expect(() => callback('null')).not.toThrow();
    expect(rejected).toEqual(["Cannot read properties of null (reading 'format')"]);
    callback('good');
    expect(loaded).toEqual(['good']);
  });
});
