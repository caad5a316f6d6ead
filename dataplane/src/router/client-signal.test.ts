import { describe, expect, it } from 'vitest';
import { RequestAbort } from './client-signal.ts';

describe('RequestAbort', () => {
  it('calls its remaining listeners once, in order, with the reason set', () => {
    const abort = new RequestAbort();
    const seen: string[] = [];
    const removed = () => seen.push('removed');
    abort.addEventListener('abort', () => seen.push(`first ${String(abort.reason)}`));
    abort.addEventListener('abort', removed);
    abort.addEventListener('abort', () => seen.push(`second ${String(abort.aborted)}`));
    abort.removeEventListener('abort', removed);
    abort.abort('gone');
    abort.abort('again');
    expect(seen).toEqual(['first gone', 'second true']);
    expect(abort.reason).toBe('gone');
  });

  it("gives an AbortController's AbortError when aborted without a reason", () => {
    const abort = new RequestAbort();
    abort.abort();
    expect(abort.reason).toBeInstanceOf(DOMException);
    expect((abort.reason as DOMException).name).toBe('AbortError');
  });

  it('runs the other listeners when one throws, and reports the error as uncaught', async () => {
    const abort = new RequestAbort();
    const reported = new Promise<unknown>((resolve) => {
      const listeners = process.listeners('uncaughtException');
      process.removeAllListeners('uncaughtException');
      process.once('uncaughtException', (err) => {
        for (const l of listeners) process.on('uncaughtException', l);
        resolve(err);
      });
    });
    let after = false;
    abort.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    abort.addEventListener('abort', () => (after = true));
    abort.abort();
    expect(after).toBe(true);
    expect(((await reported) as Error).message).toBe('listener failed');
  });

  it('ignores listeners added after the abort (an AbortSignal never fires twice)', () => {
    const abort = new RequestAbort();
    abort.abort();
    let called = false;
    abort.addEventListener('abort', () => (called = true));
    abort.abort();
    expect(called).toBe(false);
  });
});
