/**
 * Key revocations survive a rejected file. An edit that revokes a key and, elsewhere, breaks
 * something unrelated must not leave the key working until someone notices: what the
 * rejected file says about ApiKeys is read on its own, and only the direction that removes
 * access is applied. Everything else (new keys, new models, budgets) waits for a valid file.
 *
 * Only explicit statements count: a schema-valid ApiKey document that says `disabled: true`
 * or carries another keyHash. A key whose document is missing is not revoked from a rejected
 * file, because a file caught half-written or cut short looks exactly like that; deleting the
 * document revokes the key once the file is valid.
 */
import { sharedValidators } from '@gantry/crds';
import { parseAllDocuments } from 'yaml';
import type { Snapshot } from './snapshot.ts';

export interface KeyStatement {
  keyHash: string | undefined;
  disabled: boolean;
}

interface ApiKeyShape {
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
  spec?: { keyHash?: string; disabled?: boolean };
}

/** `namespace/name` → what each schema-valid ApiKey document of the file says. */
export function keyStatements(text: string): Map<string, KeyStatement> {
  const byId = new Map<string, KeyStatement>();
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(text);
  } catch {
    return byId;
  }
  for (const doc of docs) {
    if (doc.errors.length > 0) continue;
    let value: ApiKeyShape | null;
    try {
      value = doc.toJS() as ApiKeyShape | null;
    } catch {
      continue; // e.g. an unresolved alias
    }
    if (value?.kind !== 'ApiKey' || !sharedValidators().ApiKey(value)) continue;
    const { name, namespace } = value.metadata as { name: string; namespace?: string };
    byId.set(`${namespace ?? 'default'}/${name}`, {
      keyHash: value.spec?.keyHash,
      disabled: value.spec?.disabled === true,
    });
  }
  return byId;
}

/** Hex hashes of the serving snapshot's keys that the statements revoke. */
export function revokedKeys(snapshot: Snapshot, statements: ReadonlyMap<string, KeyStatement>): string[] {
  const revoked: string[] = [];
  for (const [hex, key] of snapshot.keys) {
    const said = statements.get(key.id);
    if (!said) continue;
    if (said.disabled || (said.keyHash !== undefined && said.keyHash.toLowerCase() !== hex))
      revoked.push(hex);
  }
  return revoked;
}

/** The serving snapshot minus the revoked keys, as a new version. */
export function withoutKeys(snapshot: Snapshot, hashes: readonly string[], version: number): Snapshot {
  const keys = new Map(snapshot.keys);
  for (const hex of hashes) keys.delete(hex);
  return { ...snapshot, version, loadedAt: new Date(), keys };
}
