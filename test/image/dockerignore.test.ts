import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerIgnored, parseDockerignore } from './dockerignore.ts';

const repo = resolve(import.meta.dirname, '../..');

describe('.dockerignore', () => {
  it('matches as Docker does: a bare name only at the context root, **/ at any depth', () => {
    const bare = parseDockerignore('.tmp\n');
    expect(dockerIgnored(bare, '.tmp')).toBe(true);
    expect(dockerIgnored(bare, '.tmp/a/b')).toBe(true);
    expect(dockerIgnored(bare, 'dataplane/.tmp')).toBe(false);
    const deep = parseDockerignore('**/.tmp\n');
    expect(dockerIgnored(deep, '.tmp')).toBe(true);
    expect(dockerIgnored(deep, 'dataplane/.tmp/bundle-assets-1/dist/gantry.mjs')).toBe(true);
    expect(dockerIgnored(deep, 'dataplane/src/tmp.ts')).toBe(false);
    expect(dockerIgnored(parseDockerignore('*.log\n'), 'a/b.log')).toBe(false);
  });

  it("the repository's file leaves out test scratch folders at any depth, and keeps the sources", () => {
    const patterns = parseDockerignore(readFileSync(join(repo, '.dockerignore'), 'utf8'));
    // test/image/bundle-assets.test.ts writes its relocated bundles under dataplane/.tmp.
    expect(dockerIgnored(patterns, 'dataplane/.tmp/bundle-assets-1/no-cache.yaml')).toBe(true);
    expect(dockerIgnored(patterns, 'dataplane/node_modules/x/index.js')).toBe(true);
    expect(dockerIgnored(patterns, 'dataplane/dist/gantry.mjs')).toBe(true);
    expect(dockerIgnored(patterns, 'dataplane/src/main.ts')).toBe(false);
    expect(dockerIgnored(patterns, 'models/minilm/vocab.txt')).toBe(false);
  });
});
