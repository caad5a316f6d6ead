/**
 * A shutdown step that waits on a store (settlements not yet acknowledged, the usage
 * recorder's last flush) waits at most this long: a store that hangs without failing would
 * otherwise hold a terminating pod until SIGKILL, which logs nothing of what was owed.
 */
export const DEFAULT_STORE_WAIT_MS = 2_000;
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
