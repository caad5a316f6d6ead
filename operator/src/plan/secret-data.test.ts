import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_DATA_KEY, PUBLISHED_GZIP_KEY, publishedText } from '@gantry/dataplane/config/published';
import { MAX_SNAPSHOT_BYTES, snapshotSecretData } from './publication.ts';

const decodedBytes = (data: Record<string, string>): number =>
  Object.values(data).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0);

/** Text gzip shrinks by a quarter at most (random base64), of `bytes` bytes. */
const incompressible = (bytes: number): string =>
  JSON.stringify({ pad: randomBytes(bytes).toString('base64').slice(0, bytes) });

describe('snapshotSecretData', () => {
  it('writes the plain form beside the gzipped one while both fit, for pods of the release before gzip', () => {
    const text = JSON.stringify({ manifests: [], hello: 'world' });
    const data = snapshotSecretData(text);
    expect(Object.keys(data).sort()).toEqual([PUBLISHED_DATA_KEY, PUBLISHED_GZIP_KEY].sort());
    expect(Buffer.from(data[PUBLISHED_DATA_KEY]!, 'base64').toString('utf8')).toBe(text);
    // New pods read the gzipped form, old ones the plain one: the same text either way.
    expect(publishedText(data)).toEqual({ ok: true, text });
    expect(publishedText({ [PUBLISHED_DATA_KEY]: data[PUBLISHED_DATA_KEY]! })).toEqual({ ok: true, text });
  });

  it('writes only the gzipped form once both would not fit, and never more than a Secret holds', () => {
    const text = incompressible(700 * 1024);
    const data = snapshotSecretData(text);
    expect(Object.keys(data)).toEqual([PUBLISHED_GZIP_KEY]);
    expect(publishedText(data)).toEqual({ ok: true, text });
    expect(decodedBytes(data)).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
  });

  it('keeps both forms within the limit at the boundary', () => {
    for (const bytes of [300 * 1024, 400 * 1024, 520 * 1024, 600 * 1024]) {
      const data = snapshotSecretData(incompressible(bytes));
      expect(decodedBytes(data)).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
    }
  });
});
