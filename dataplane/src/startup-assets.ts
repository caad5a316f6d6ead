/**
 * The file assets a gateway needs, loaded or checked once before it listens: a missing or
 * corrupt one stops start-up with an AssetError naming the file and the fix, rather than
 * failing (or re-reading the disk on) every request that reaches it.
 */
import type { Snapshot } from './config/snapshot.ts';
import { checkMinilmFiles } from './pipeline/cache/minilm-files.ts';
import { minilmDir } from './pipeline/cache/minilm-embedder.ts';
import { MINILM_EMBEDDING_MODEL, resolveCachePolicy, tenantCacheEnabled } from './pipeline/cache/policy.ts';
import { learnedGuards } from './pipeline/guardrails/learned/model.ts';

/** A tenant whose cache is on and embeds with minilm (the default embedder). */
export function needsMinilm(snapshot: Snapshot): boolean {
  for (const t of snapshot.tenants.values())
    if (tenantCacheEnabled(t.spec) && resolveCachePolicy(t.cache).embeddingModel === MINILM_EMBEDDING_MODEL)
      return true;
  return false;
}

export function loadStartupAssets(snapshot: Snapshot, env: NodeJS.ProcessEnv): void {
  // Loaded whatever the policies say: 0.5 MB that ships inside dist/, and guardrail policies
  // can arrive with any later config.
  learnedGuards();
  if (needsMinilm(snapshot)) checkMinilmFiles(minilmDir(env));
}
