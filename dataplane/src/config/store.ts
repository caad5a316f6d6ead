/**
 * Holds the current snapshot and swaps it atomically. Readers take `current()` once per
 * request and keep that reference, so in-flight requests finish on the snapshot they
 * started with; a rejected reload leaves the previous snapshot serving.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { CompileResult } from './compile.ts';
import type { LoadOptions } from './load.ts';
import { loadConfigFile } from './load.ts';
import type { Snapshot } from './snapshot.ts';

export interface ConfigLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export type ReloadEvent = { ok: true; version: number } | { ok: false; errors: string[] };

export class ConfigStore {
  private snapshot: Snapshot;
  private readonly listeners = new Set<(e: ReloadEvent) => void>();

  constructor(initial: Snapshot) {
    this.snapshot = initial;
  }

  current(): Snapshot {
    return this.snapshot;
  }

  /** Apply a compile result: swap on success, keep serving the old snapshot on failure. */
  apply(result: CompileResult): ReloadEvent {
    const event: ReloadEvent = result.ok
      ? { ok: true, version: (this.snapshot = result.snapshot).version }
      : { ok: false, errors: result.errors };
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
            { errors: event.errors, file },
            'config reload rejected; previous snapshot keeps serving',
          );
        if (result.ok) for (const w of result.warnings) log.warn({ file }, w);
      })
      .catch((err: unknown) => {
        // Keep the chain alive: the next edit must still be read.
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
