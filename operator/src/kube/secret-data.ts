/**
 * Secrets' data decoded from base64, remembered per Secret version. Every reconcile reads the
 * data of every Secret in the namespace (the snapshot's own megabyte among them), and a resync
 * or status event reconciles a world whose Secrets have not changed: decoding them all again
 * each time is work thrown away.
 */
import type { V1Secret } from '@kubernetes/client-node';

interface Remembered {
  resourceVersion: string;
  data: Readonly<Record<string, string>>;
}

export class DecodedSecrets {
  /** By uid: a Secret deleted and made again under its name is another object. */
  private readonly byUid = new Map<string, Remembered>();
  /** Secrets decoded rather than remembered (tests, logs). */
  decodes = 0;

  /**
   * Secret name → decoded data, for the Secrets listed now. Only those are remembered, so what
   * is kept is bounded by the namespace's Secrets (which the informer holds anyway).
   */
  decode(secrets: readonly V1Secret[]): Map<string, Readonly<Record<string, string>>> {
    const out = new Map<string, Readonly<Record<string, string>>>();
    const seen = new Set<string>();
    for (const s of secrets) {
      const uid = s.metadata?.uid;
      const version = s.metadata?.resourceVersion;
      const known = uid === undefined ? undefined : this.byUid.get(uid);
      let data: Readonly<Record<string, string>>;
      if (known !== undefined && version !== undefined && known.resourceVersion === version)
        data = known.data;
      else {
        data = decodeSecret(s);
        this.decodes++;
        // Without a uid and a version there is no telling a change: such a Secret is decoded each time.
        if (uid !== undefined && version !== undefined)
          this.byUid.set(uid, { resourceVersion: version, data });
      }
      if (uid !== undefined) seen.add(uid);
      out.set(s.metadata!.name!, data);
    }
    for (const uid of this.byUid.keys()) if (!seen.has(uid)) this.byUid.delete(uid);
    return out;
  }

  /** How many Secrets are remembered. */
  get size(): number {
    return this.byUid.size;
  }
}

/** One Secret's data as text; frozen, as one value is handed to every reconcile. */
export function decodeSecret(s: V1Secret): Readonly<Record<string, string>> {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) data[k] = Buffer.from(v, 'base64').toString('utf8');
  for (const [k, v] of Object.entries(s.stringData ?? {})) data[k] = v;
  return Object.freeze(data);
}
