/**
 * Passing events from one socket to the other with backpressure: a side that does not read (a
 * slow or stalled client) stops the gateway reading the other side, instead of that side's
 * events piling up in the gateway's memory; reading resumes once the backlog is written out.
 */
import type { WebSocket } from 'ws';

const OPEN = 1;
/** Past this much unsent to one side, the other side is no longer read. */
export const HIGH_WATER_BYTES = 4 * 1024 * 1024;
export const LOW_WATER_BYTES = 1024 * 1024;

export function relay(
  from: WebSocket,
  to: WebSocket,
  text: string,
  high = HIGH_WATER_BYTES,
  low = LOW_WATER_BYTES,
): void {
  if (to.readyState !== OPEN) return;
  to.send(text, () => {
    if (from.isPaused && to.bufferedAmount < low) from.resume();
  });
  if (to.bufferedAmount > high && !from.isPaused) from.pause();
}
