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

/** The side whose reading a backlog pauses: a socket, or one reason's switch over it (client-flow.ts). */
export interface Reader {
  readonly isPaused: boolean;
  pause(): void;
  resume(): void;
}

export function relay(
  from: Reader,
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
