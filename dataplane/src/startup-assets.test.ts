import type { Manifest } from '@gantry/crds';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AssetError } from './assets.ts';
import { compile } from './config/compile.ts';
import type { Snapshot } from './config/snapshot.ts';
import { minilmDir } from './pipeline/cache/minilm-embedder.ts';
import { checkMinilmFiles } from './pipeline/cache/minilm-files.ts';
import { minilmCheckForNewSnapshots, needsMinilm } from './startup-assets.ts';

const temps: string[] = [];
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * A copy of the minilm folder where `name` is a directory that SOURCE.json records at its own
 * size: it passes the size check and then cannot be read (EISDIR), as a file owned by another
 * uid would fail with EACCES (chmod 000 cannot simulate that: the tests run as root).
 */
function unreadable(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-minilm-unreadable-'));
  temps.push(dir);
  cpSync(minilmDir(), dir, { recursive: true });
  rmSync(join(dir, name));
  mkdirSync(join(dir, name));
  const source = JSON.parse(readFileSync(join(dir, 'SOURCE.json'), 'utf8')) as {
    files: Record<string, number>;
  };
  source.files[name] = statSync(join(dir, name)).size;
  writeFileSync(join(dir, 'SOURCE.json'), JSON.stringify(source));
  return dir;
}

function cachingSnapshot(): Snapshot {
  const manifests: Manifest[] = [
    {
      apiVersion: 'gantry.dev/v1alpha1',
      kind: 'Tenant',
      metadata: { name: 'dev' },
      spec: { models: ['*'] },
    },
  ];
  const result = compile(
    manifests.map((manifest) => ({ manifest, where: 'test' })),
    { env: {}, version: 1, source: 'test' },
  );
  if (!result.ok) throw new Error(result.errors.join('; '));
  return result.snapshot;
}

describe('minilm files that pass their size check but cannot be read', () => {
  it.each(['words.int8.bin', 'vocab.txt'])('%s: an AssetError naming the file and the code', (name) => {
    const dir = unreadable(name);
    let caught: unknown;
    try {
      checkMinilmFiles(dir);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AssetError);
    expect((caught as AssetError).path).toBe(join(dir, name));
    expect((caught as AssetError).message).toContain(`${join(dir, name)}: unreadable (EISDIR)`);
  });

  it('a reload that needs them logs one error and returns (never throws out of a listener)', () => {
    const snapshot = cachingSnapshot();
    expect(needsMinilm(snapshot)).toBe(true);
    const dir = unreadable('vocab.txt');
    const errors: { obj: Record<string, unknown>; msg: string }[] = [];
    const check = minilmCheckForNewSnapshots(dir, { error: (obj, msg) => errors.push({ obj, msg }) }, false);
    expect(() => check(snapshot)).not.toThrow();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.obj).toEqual({ file: join(dir, 'vocab.txt') });
    expect(errors[0]!.msg).toMatch(/minilm cache embedder unavailable.*vocab\.txt: unreadable \(EISDIR\)/);
  });
});
