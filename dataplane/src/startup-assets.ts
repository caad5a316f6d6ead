/**
 * The file assets a gateway needs, loaded or checked once before it listens: a missing or
 * corrupt one stops start-up with an AssetError naming the file and the fix, rather than
 * failing (or re-reading the disk on) every request that reaches it.
 */
import { AssetError } from './assets.ts';
import type { Snapshot } from './config/snapshot.ts';
import { checkMinilmFiles } from './pipeline/cache/minilm-files.ts';
import { MINILM_EMBEDDING_MODEL, resolveCachePolicy, tenantCacheEnabled } from './pipeline/cache/policy.ts';
import { learnedGuards } from './pipeline/guardrails/learned/model.ts';

/** A tenant whose cache is on and embeds with minilm (the default embedder). */
export function needsMinilm(snapshot: Snapshot): boolean {
  for (const t of snapshot.tenants.values())
    if (tenantCacheEnabled(t.spec) && resolveCachePolicy(t.cache).embeddingModel === MINILM_EMBEDDING_MODEL)
      return true;
  return false;
}

/**
 * `minilmDir` is the folder the gateway's minilm embedder reads (one value, resolved once from
 * the gateway's env by the caller), so the check and the embedder cannot disagree.
 */
export function loadStartupAssets(snapshot: Snapshot, minilmDir: string): void {
  // Loaded whatever the policies say: 0.5 MB that ships inside dist/, and guardrail policies
  // can arrive with any later config.
  learnedGuards();
  if (needsMinilm(snapshot)) checkMinilmFiles(minilmDir);
}

export interface AssetLog {
  error(obj: Record<string, unknown>, msg: string): void;
}

/**
 * The same minilm check for a config that arrives after start-up (a hot reload, or every
 * snapshot in snapshot-Secret mode, whose initial config is empty), run when a snapshot first
 * needs minilm. A pod already serving is not stopped for it: its other tenants and routes keep
 * working and the minilm caches fail open (a miss), so the problem is one error log naming the
 * file; the next snapshot that needs minilm checks again until the files pass, and the embedder
 * itself retries its load (MINILM_RETRY_MS). Returns the check to run on each new snapshot;
 * it never throws.
 */
export function minilmCheckForNewSnapshots(
  minilmDir: string,
  log: AssetLog,
  checkedAtStart: boolean,
): (snapshot: Snapshot) => void {
  let passed = checkedAtStart;
  return (snapshot) => {
    if (passed || !needsMinilm(snapshot)) return;
    try {
      checkMinilmFiles(minilmDir);
      passed = true;
    } catch (err) {
      // Nothing escapes: this runs inside reload listeners (an un-awaited informer handler in
      // snapshot-Secret mode, where a throw is an unhandled rejection that ends the pod; the
      // file watcher, where it would mark the config already serving as rejected).
      const message = err instanceof Error ? err.message : String(err);
      log.error(
        { file: err instanceof AssetError ? err.path : minilmDir },
        `minilm cache embedder unavailable; tenants caching with it get every lookup as a miss: ${message}`,
      );
    }
  };
}
