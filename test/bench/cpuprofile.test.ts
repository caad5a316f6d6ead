import { describe, expect, it } from 'vitest';
import { isDataplaneBundle } from './cpuprofile.ts';

describe('isDataplaneBundle: which frames map through the source map beside their file', () => {
  const root = '/repo';
  it('the data plane bundle does', () => {
    expect(isDataplaneBundle('/repo/dataplane/dist/gantry.mjs', root)).toBe(true);
    expect(isDataplaneBundle('/repo/dataplane/dist/chunk.js', root)).toBe(true);
  });

  it('packages with maps of their own, other repo files and other checkouts do not', () => {
    expect(isDataplaneBundle('/repo/node_modules/ajv/dist/core.js', root)).toBe(false);
    expect(isDataplaneBundle('/repo/dataplane/node_modules/x/index.mjs', root)).toBe(false);
    expect(isDataplaneBundle('/repo/operator/dist/operator.mjs', root)).toBe(false);
    expect(isDataplaneBundle('/repo/dataplane/dist-old/gantry.mjs', root)).toBe(false);
    expect(isDataplaneBundle('/other/dataplane/dist/gantry.mjs', root)).toBe(false);
    expect(isDataplaneBundle('/repo/dataplane/dist/gantry.mjs.map', root)).toBe(false);
  });
});
