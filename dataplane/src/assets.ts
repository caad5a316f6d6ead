/**
 * Where the data plane's file assets are, in one place. This module sits at the root of
 * dataplane/src, and the bundle (dataplane/dist/gantry.mjs) at the root of dataplane/dist:
 * the build copies every bundled asset into dist at the path it has under src
 * (build/copy-assets.ts, run by build/bundle.ts), so one path relative to this module's URL finds it both
 * under tsx and in the bundle, without probing the disk for candidates.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Assets the bundle carries beside itself, relative to dataplane/src (and so to dataplane/dist):
 * a copied or relocated dist/ keeps working.
 */
export const BUNDLED_ASSETS = [
  'pipeline/guardrails/learned/model.json',
  'pipeline/guardrails/learned/model.bin',
] as const;

export type BundledAsset = (typeof BUNDLED_ASSETS)[number];

/**
 * The minilm embedder's files (23 MB) stay in the repository's models/minilm rather than in
 * dist: dataplane/src and dataplane/dist are both two levels below the repository root, so the
 * same relative path reaches it from either, and the image copies models/ beside dataplane/.
 */
export const MINILM_DIR_FROM_ASSETS = '../../models/minilm/';

/** Absolute path of a path relative to dataplane/src (tsx) or dataplane/dist (bundle). */
export function assetPath(relative: string, base: string = import.meta.url): string {
  return fileURLToPath(new URL(relative, base));
}

/** A bundled asset that is missing or unreadable or fails its checks: a start-up error. */
export class AssetError extends Error {
  constructor(
    readonly path: string,
    problem: string,
    fix: string,
  ) {
    super(`${path}: ${problem}. ${fix}`);
    this.name = 'AssetError';
  }
}

const REBUILD_HINT =
  'The bundle needs the files that `npm run build` copies into dataplane/dist beside gantry.mjs; ' +
  'copy the whole dist/ folder with it, or rebuild';

/** Reads a bundled asset, turning a missing or unreadable file into an AssetError with the fix. */
export function readBundledAsset(relative: BundledAsset, base?: string): { path: string; bytes: Buffer } {
  const path = assetPath(relative, base);
  try {
    return { path, bytes: readFileSync(path) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AssetError(
      path,
      code === 'ENOENT' ? 'missing' : `unreadable (${code ?? String(err)})`,
      REBUILD_HINT,
    );
  }
}

/** The message for an asset that was read but is not what the loader expects. */
export function corruptAsset(path: string, problem: string): AssetError {
  return new AssetError(path, `corrupt (${problem})`, REBUILD_HINT);
}
