/**
 * `npm run build`: bundles the data plane into dataplane/dist/gantry.mjs, npm packages kept
 * external, with a source map (without the sources' text) so `--enable-source-maps` traces name
 * the TypeScript lines. The bundle is pure ASCII (`ascii.ts`, checked here: a non-ASCII
 * character left fails the build) and has no comments or indentation (`minifyWhitespace`):
 * V8 keeps its source in the heap, 1.1 MB one byte per character instead of 3.0 MB. Names and
 * syntax are kept, so traces name the same functions. docs/decisions.md (Memory, issue 15).
 * The files the bundle loads (BUNDLED_ASSETS) are copied beside it here, not by an npm
 * `postbuild` script: with `ignore-scripts=true` npm skips those, and `npm start` would then
 * serve a bundle without its guard model.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { asciiSource, firstNonAscii } from './ascii.ts';
import { copyBundledAssets } from './copy-assets.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const outfile = resolve(root, process.argv[2] ?? 'dataplane/dist/gantry.mjs');

await build({
  absWorkingDir: root,
  entryPoints: ['dataplane/src/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  alias: { '@gantry/crds': './crds/src/index.ts' },
  sourcemap: true,
  sourcesContent: false,
  charset: 'ascii',
  minifyWhitespace: true,
  logLevel: 'warning',
  outfile,
  plugins: [asciiSource],
});

const out = await readFile(outfile, 'latin1');
const at = firstNonAscii(out);
if (at >= 0) {
  console.error(
    `${outfile}: non-ASCII byte at ${at} (${JSON.stringify(out.slice(Math.max(0, at - 40), at + 10))}); V8 would hold the whole source two bytes per character`,
  );
  process.exit(1);
}

copyBundledAssets(join(root, 'dataplane/src'), dirname(outfile));
