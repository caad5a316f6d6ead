import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile } from './load.ts';

async function load(text: string) {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-load-'));
  const file = join(dir, 'gantry.yaml');
  await writeFile(file, text);
  return loadConfigFile(file, { env: {}, version: 1 });
}

describe('loadConfigFile', () => {
  it('rejects an unresolved YAML alias instead of throwing', async () => {
    const result = await load(
      'apiVersion: gantry.dev/v1alpha1\nkind: Tenant\nmetadata: {name: x}\nspec: *nope\n',
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors[0]).toMatch(/gantry\.yaml: .*alias/i);
  });

  it('rejects a file with no manifests', async () => {
    const result = await load('# nothing yet\n');
    expect(!result.ok && result.errors[0]).toBe('gantry.yaml: no manifests found');
  });
});
