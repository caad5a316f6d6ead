/**
 * Waits for a condition that another process brings about (an apiserver, a controller, a
 * data-plane pod): polls `probe` until it returns a value, and fails with what was last
 * seen when the deadline passes. Polling a condition, not sleeping a guessed time.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${String(last)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
