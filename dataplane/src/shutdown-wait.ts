/**
 * A shutdown step that waits on a store (settlements not yet acknowledged, the usage
 * recorder's last flush) waits at most this long: a store that hangs without failing would
 * otherwise hold a terminating pod until SIGKILL, which logs nothing of what was owed.
 */
export const DEFAULT_STORE_WAIT_MS = 2_000;
/**
 * After the stores close, what is left to wait for is settlements writing to the local journal
 * (their store commands were cut): a disk write, not a store, so it gets its own cap rather than
 * `--store-wait-ms`, which a test or operator may set far below what a loaded disk needs.
 */
export const JOURNAL_WRITE_WAIT_MS = 1_000;
/** setTimeout fires at once past 2^31-1 ms; ten minutes is beyond any grace period anyway. */
export const MAX_STORE_WAIT_MS = 600_000;

/** True when `work` settled within `ms`; false when the wait gave up (`work` runs on). */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      gaveUp,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
