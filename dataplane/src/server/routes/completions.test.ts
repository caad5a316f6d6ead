import { describe, expect, it } from 'vitest';
import { STREAM_STATUS } from '../../pipeline/simple.ts';
import { legacyStreamEnding } from './completions.ts';

describe('legacyStreamEnding: how a piped legacy stream ended', () => {
  it('is complete only with the provider end marker and the client still there', () => {
    expect(legacyStreamEnding(false, false, true)).toBe('complete');
    // A body that ended cleanly without [DONE] (an in-stream error event, a cut proxy) failed.
    expect(legacyStreamEnding(false, false, false)).toBe('failed');
    expect(legacyStreamEnding(false, true, true)).toBe('failed');
    // A client that left is billed for what was produced, whatever the provider did after.
    expect(legacyStreamEnding(true, true, false)).toBe('client_gone');
    expect(legacyStreamEnding(true, false, true)).toBe('client_gone');
  });

  it('records each ending with its own status', () => {
    expect(STREAM_STATUS).toEqual({ complete: 200, client_gone: 499, failed: 502 });
  });
});
