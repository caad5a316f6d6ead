/** The client's reading under several reasons to pause, and the run of refusals that ends a session. */
import { describe, expect, it } from 'vitest';
import { ClientFlow, MAX_REFUSALS_IN_A_ROW } from './client-flow.ts';
import type { Reader } from './relay.ts';

/** A socket's pause switch, counting its calls. */
class Switch implements Reader {
  isPaused = false;
  pauses = 0;
  pause(): void {
    this.isPaused = true;
    this.pauses++;
  }
  resume(): void {
    this.isPaused = false;
  }
}

describe('ClientFlow', () => {
  it('reads again only when no reason holds the client', () => {
    const socket = new Switch();
    const flow = new ClientFlow(socket, 100, 10);
    const upstream = flow.reader('upstream-backlog');
    const own = flow.reader('own-backlog');
    upstream.pause();
    own.pause();
    expect(socket.isPaused).toBe(true);
    upstream.resume();
    expect(socket.isPaused).toBe(true);
    expect(upstream.isPaused).toBe(false);
    own.resume();
    expect(socket.isPaused).toBe(false);
  });

  it('pauses while the queue is past the high-water mark, until it drains below the low one', async () => {
    const socket = new Switch();
    const flow = new ClientFlow(socket, 100, 10);
    flow.arrived(60);
    expect(socket.isPaused).toBe(false);
    flow.arrived(60);
    expect(socket.isPaused).toBe(true);
    expect(flow.queued).toBe(120);
    await flow.handled(60, async () => undefined);
    expect(socket.isPaused).toBe(true);
    await flow.handled(60, async () => undefined);
    expect(socket.isPaused).toBe(false);
    expect(flow.queued).toBe(0);
  });

  it(`ends on the ${MAX_REFUSALS_IN_A_ROW}th refusal in a row; a forwarded event starts the count again`, async () => {
    const flow = new ClientFlow(new Switch());
    const refused = () => flow.handled(1, async () => undefined);
    const forwarded = () => flow.handled(1, async () => flow.forwarded());
    for (let i = 1; i < MAX_REFUSALS_IN_A_ROW; i++) expect(await refused()).toBe(false);
    expect(await forwarded()).toBe(false);
    for (let i = 1; i < MAX_REFUSALS_IN_A_ROW; i++) expect(await refused()).toBe(false);
    expect(await refused()).toBe(true);
  });

  it('neither counts nor ends the run on an excused refusal (the key spent by its other users)', async () => {
    const flow = new ClientFlow(new Switch());
    const refused = () => flow.handled(1, async () => undefined);
    const excused = () => flow.handled(1, async () => flow.excused());
    for (let i = 1; i < MAX_REFUSALS_IN_A_ROW; i++) expect(await refused()).toBe(false);
    for (let i = 0; i < 2 * MAX_REFUSALS_IN_A_ROW; i++) expect(await excused()).toBe(false);
    // The run of the client's own refusals was kept: one more ends it.
    expect(await refused()).toBe(true);
  });

  it('takes a handled event off the queue even when handling it failed', async () => {
    const flow = new ClientFlow(new Switch(), 100, 10);
    flow.arrived(150);
    await expect(flow.handled(150, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(flow.queued).toBe(0);
  });
});
