/**
 * Holds the current snapshot and swaps it atomically. Readers take `current()` once per
 * request and keep that reference, so in-flight requests finish on the snapshot they
 * started with; a rejected reload leaves the previous snapshot serving (minus the keys the
 * rejected file revokes, see revocations.ts) and is reported by `status()` until a file
 * loads again.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { LoadOptions, LoadResult } from './load.ts';
import { loadConfigFile } from './load.ts';
import { revokedKeys, withoutKeys } from './revocations.ts';
import type { Snapshot } from './snapshot.ts';

export interface ConfigLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** `version` is the snapshot serving after the event; `revoked` names the keys a rejected file still revoked. */
export type ReloadEvent =
  { ok: true; version: number } | { ok: false; errors: string[]; version: number; revoked: string[] };

/** A deployment the serving snapshot leaves out of this pod, and the unset variable why. */
export interface LeftOutStatus {
  deployment: string;
  env: string;
}

/** What /readyz and the metrics say about the newest config file, and what this pod serves less. */
export type ConfigStatus = (
  | { status: 'ok'; version: number; loadedAt: Date; sha256: string | undefined }
  | {
      status: 'rejected';
      /** The snapshot still serving. */
      version: number;
      /** The file the serving snapshot came from. */
      sha256: string | undefined;
      /** The newest (rejected) file. */
      rejectedSha256: string | undefined;
      /** The newest file's errors. */
      reason: string[];
      /** First rejection since the last file that loaded. */
      since: Date;
      /** Key ids revoked from rejected files since then. */
      revokedKeys: string[];
    }
) & {
  /** Published deployments this pod does not serve: otherwise only its log would tell. */
  leftOut: LeftOutStatus[];
};

export class ConfigStore {
  private snapshot: Snapshot;
  private rejection:
    { reason: string[]; since: Date; revokedKeys: string[]; rejectedSha256: string | undefined } | undefined;
  /** sha256 of the file the serving snapshot came from, when it came from a file. */
  private sha256: string | undefined;
  private readonly listeners = new Set<(e: ReloadEvent) => void>();

  constructor(initial: Snapshot, sha256?: string) {
    this.snapshot = initial;
    this.sha256 = sha256;
  }

  current(): Snapshot {
    return this.snapshot;
  }

  status(): ConfigStatus {
    const { version, loadedAt } = this.snapshot;
    const sha256 = this.sha256;
    // By name, so pods' bodies compare whatever order the snapshot lists them in.
    const leftOut = (this.snapshot.leftOut ?? [])
      .map(({ deployment, env }) => ({ deployment, env }))
      .sort((a, b) => a.deployment.localeCompare(b.deployment));
    return this.rejection
      ? { status: 'rejected', version, sha256, ...this.rejection, leftOut }
      : { status: 'ok', version, loadedAt, sha256, leftOut };
  }

  /**
   * Apply a load result: swap on success; on failure keep serving the old snapshot, except
   * for keys the file explicitly revokes.
   */
  apply(result: LoadResult): ReloadEvent {
    let event: ReloadEvent;
    if (result.ok) {
      this.snapshot = result.snapshot;
      this.sha256 = result.sha256;
      this.rejection = undefined;
      event = { ok: true, version: result.snapshot.version };
    } else {
      const hashes = result.keyStatements ? revokedKeys(this.snapshot, result.keyStatements) : [];
      const revoked = hashes.map((h) => this.snapshot.keys.get(h)!.id);
      if (hashes.length > 0) this.snapshot = withoutKeys(this.snapshot, hashes, this.snapshot.version + 1);
      this.rejection = {
        reason: result.errors,
        since: this.rejection?.since ?? new Date(),
        revokedKeys: [...(this.rejection?.revokedKeys ?? []), ...revoked],
        rejectedSha256: result.sha256,
      };
      event = { ok: false, errors: result.errors, version: this.snapshot.version, revoked };
    }
    for (const l of this.listeners) l(event);
    return event;
  }

  onReload(listener: (e: ReloadEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Watch the config file's directory (editors and kubelet ConfigMap updates replace the
 * file rather than write it in place) and reload after changes settle.
 */
export function watchConfigFile(
  file: string,
  store: ConfigStore,
  opts: Omit<LoadOptions, 'version'>,
  log: ConfigLogger,
  debounceMs = 50,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const name = basename(file);
  const reload = () => {
    running = running
      .then(async () => {
        const result = await loadConfigFile(file, { ...opts, version: store.current().version + 1 });
        const event = store.apply(result);
        if (event.ok) log.info({ version: event.version, file }, 'config reloaded');
        else
          log.error(
            { errors: event.errors, file, revokedKeys: event.revoked, version: event.version },
            'config reload rejected; previous snapshot keeps serving',
          );
        if (result.ok) for (const w of result.warnings) log.warn({ file }, w);
      })
      .catch((err: unknown) => {
        // Keep the chain alive: the next edit must still be read; the failure is a rejection.
        try {
          store.apply({ ok: false, errors: [`${file}: ${(err as Error).message}`] });
        } catch {
          // A listener failed again; the log line below still reports the reload.
        }
        log.error(
          { file, err: (err as Error).message },
          'config reload failed; previous snapshot keeps serving',
        );
      });
  };
  const watcher: FSWatcher = watch(dirname(file), (_event, changed) => {
    // ConfigMap mounts swap a `..data` symlink; plain edits name the file itself.
    if (changed !== null && changed !== name && !changed.startsWith('..')) return;
    clearTimeout(timer);
    timer = setTimeout(reload, debounceMs);
  });
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
