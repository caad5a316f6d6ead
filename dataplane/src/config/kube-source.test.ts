import { describe, expect, it } from 'vitest';
import { emptySnapshot, loadSnapshotSecret, neverThrows } from './kube-source.ts';
import {
  MAX_INFLATED_BYTES,
  packSnapshot,
  PUBLISHED_DATA_KEY,
  PUBLISHED_FORMAT,
  PUBLISHED_GZIP_KEY,
} from './published.ts';
import { ConfigStore } from './store.ts';
import { providerEnvOnly } from './provider-env.ts';
import { KEY, POD_ENV, unsetEnvSnapshot } from './unset-env-fixture.ts';
import { createHash } from 'node:crypto';

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

describe('a snapshot Secret that inflates too far', () => {
  const ref = { namespace: 'gantry', name: 'gantry-snapshot' };
  const doc = (version: number) =>
    JSON.stringify({ format: PUBLISHED_FORMAT, version, hash: 'h', manifests: [], credentials: {} });
  const gz = (text: string) => ({ [PUBLISHED_GZIP_KEY]: packSnapshot(text).toString('base64') });

  it('is rejected with the reason, and the last good snapshot keeps serving', () => {
    const store = new ConfigStore(emptySnapshot(ref));
    const errors: string[] = [];
    const log = {
      info: () => undefined,
      warn: () => undefined,
      error: (_: object, m: string) => errors.push(m),
    };
    const opts = { env: {}, source: 'secret gantry/gantry-snapshot' };
    loadSnapshotSecret(gz(doc(3)), store, opts, log);
    expect(store.current().version).toBe(3);
    // Valid JSON padded with spaces: each MiB gzips to about a kilobyte.
    const padded = doc(4).slice(0, -1) + ' '.repeat(33 * 1024 * 1024) + '}';
    const data = gz(padded);
    expect(data[PUBLISHED_GZIP_KEY].length).toBeLessThan(200_000);
    loadSnapshotSecret(data, store, opts, log);
    expect(store.current().version).toBe(3);
    expect(errors).toEqual([
      `snapshot rejected: snapshot.json.gz inflates to more than ${MAX_INFLATED_BYTES} bytes, far more than any snapshot that fits a Secret; previous snapshot keeps serving`,
    ]);
  });

  it('loads a padded one inside the bound (32 MiB)', () => {
    const store = new ConfigStore(emptySnapshot(ref));
    const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const padded = doc(5).slice(0, -1) + ' '.repeat(31 * 1024 * 1024) + '}';
    loadSnapshotSecret(gz(padded), store, { env: {}, source: 's' }, log);
    expect(store.current().version).toBe(5);
  });
});

describe('a snapshot with a deployment whose apiKeyEnv this pod lacks (fake provider off)', () => {
  it('loads without it, logs a warning naming it, and a later revocation still lands', () => {
    const ref = { namespace: 'gantry', name: 'gantry-snapshot' };
    const store = new ConfigStore(emptySnapshot(ref));
    const warnings: string[] = [];
    const errors: string[] = [];
    const log = {
      info: () => undefined,
      warn: (_: object, m: string) => warnings.push(m),
      error: (_: object, m: string) => errors.push(m),
    };
    const opts = { env: providerEnvOnly(POD_ENV), source: 'secret gantry/gantry-snapshot' };
    const plain = (text: string) => ({ [PUBLISHED_DATA_KEY]: Buffer.from(text).toString('base64') });
    const hash = createHash('sha256').update(KEY).digest('hex');
    loadSnapshotSecret(plain(unsetEnvSnapshot(2)), store, opts, log);
    expect(store.current().version).toBe(2);
    expect([...store.current().models.keys()]).toEqual(['gpt-4o-mini']);
    expect(warnings.some((w) => w.includes('deployment claude is left out'))).toBe(true);
    expect(store.current().keys.has(hash)).toBe(true);
    loadSnapshotSecret(plain(unsetEnvSnapshot(3, true)), store, opts, log);
    expect(store.current().version).toBe(3);
    // Disabled: the key is gone from this pod's snapshot.
    expect(store.current().keys.has(hash)).toBe(false);
    expect(errors).toEqual([]);
  });
});
