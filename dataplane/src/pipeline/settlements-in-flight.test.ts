import { describe, expect, it } from 'vitest';
import { SettlementsInFlight } from './settlements-in-flight.ts';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('SettlementsInFlight', () => {
  it('is idle at once when nothing is in flight', async () => {
    await expect(new SettlementsInFlight().idle()).resolves.toBeUndefined();
  });

  it('becomes idle only when every tracked settlement has finished, failed ones included', async () => {
    const inFlight = new SettlementsInFlight();
    const a = deferred();
    const b = deferred();
    inFlight.track(a.promise);
    inFlight.track(b.promise);
    let idle = false;
    const waiting = inFlight.idle().then(() => (idle = true));
    a.resolve();
    await a.promise;
    expect(idle).toBe(false);
    expect(inFlight.size).toBe(1);
    b.reject(new Error('store gone'));
    await waiting;
    expect(idle).toBe(true);
    expect(inFlight.size).toBe(0);
  });

  it('sums the dollars of the jobs still in flight', async () => {
    const inFlight = new SettlementsInFlight();
    const a = deferred();
    const b = deferred();
    inFlight.track(a.promise, 0.25);
    inFlight.track(b.promise, 0.5);
    expect(inFlight.owedUsd).toBe(0.75);
    a.resolve();
    await a.promise;
    await Promise.resolve();
    expect(inFlight.owedUsd).toBe(0.5);
    b.resolve();
    await inFlight.idle();
    expect(inFlight.owedUsd).toBe(0);
  });

  it('reads the amount of a job whose debt changes while it runs (a Realtime session) when asked', async () => {
    const inFlight = new SettlementsInFlight();
    const session = deferred();
    let owes = 0;
    inFlight.track(session.promise, () => owes);
    inFlight.track(deferred().promise, 0.5);
    expect(inFlight.owedUsd).toBe(0.5);
    owes = 0.25;
    expect(inFlight.owedUsd).toBe(0.75);
    session.resolve();
    await session.promise;
    await Promise.resolve();
    expect(inFlight.owedUsd).toBe(0.5);
  });

  it('reports a settlement that rejected anyway, since nobody awaits it', async () => {
    const heard: unknown[] = [];
    const inFlight = new SettlementsInFlight((err) => heard.push(err));
    const a = deferred();
    inFlight.track(a.promise);
    a.reject(new Error('script refused'));
    await inFlight.idle();
    expect(heard.map((e) => (e as Error).message)).toEqual(['script refused']);
  });
});
