/**
 * The asset step of the build: copies every file in BUNDLED_ASSETS from dataplane/src to the same
 * path beside the bundle, where the bundle's loaders look (dataplane/src/assets.ts). Part of
 * bundle.ts itself rather than an npm `postbuild` script, which `ignore-scripts=true` skips.
 * A file missing from the checkout fails the build here rather than the gateway later.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BUNDLED_ASSETS } from '../assets.ts';

export function copyBundledAssets(srcDir: string, distDir: string): void {
  for (const asset of BUNDLED_ASSETS) {
    const to = join(distDir, asset);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(srcDir, asset), to);
  }
}
