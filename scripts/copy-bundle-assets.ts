/**
 * The asset step of `npm run build`: copies every file in BUNDLED_ASSETS from dataplane/src to
 * the same path under dataplane/dist, where the bundle's loaders look (dataplane/src/assets.ts).
 * A file missing from the checkout fails the build here rather than the gateway later.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_ASSETS } from '../dataplane/src/assets.ts';

const src = new URL('../dataplane/src/', import.meta.url);
const dist = new URL('../dataplane/dist/', import.meta.url);

for (const asset of BUNDLED_ASSETS) {
  const to = fileURLToPath(new URL(asset, dist));
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(fileURLToPath(new URL(asset, src)), to);
}
