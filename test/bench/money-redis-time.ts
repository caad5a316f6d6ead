/**
 * Redis' own time per metered request, split into admission and settlement, for this checkout
 * and a baseline one on the same redis-server, call by call in turn (so load on the machine
 * weighs on both alike). Each call's time is the growth of INFO commandstats' evalsha usec
 * around it; INFO is not an evalsha, so it does not count itself. Reports a trimmed mean (the
 * slowest tenth dropped: preemption by other work on a shared machine), and the admission's
 * round trip as the client sees it (p50).
 *
 *   npx tsx test/bench/money-redis-time.ts <baseline checkout> [pairs]
 */
import { Redis } from 'ioredis';
import { budget, key, limits, record } from './money-fixture.ts';
import { percentile } from './stats.ts';
import type * as StoresModule from '../../dataplane/src/stores/index.ts';
import { startRedis } from '../harness/redis.ts';

const here = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const baseline = process.argv[2];
if (!baseline) throw new Error('usage: money-redis-time.ts <baseline checkout> [pairs]');
const pairs = Number(process.argv[3] ?? 3000);
const WARMUP = 300;
const roots = [baseline, here];

const trimmedMean = (xs: readonly number[]): number => {
  const kept = [...xs].sort((a, b) => a - b).slice(0, Math.floor(xs.length * 0.9));
  return kept.reduce((a, b) => a + b, 0) / kept.length;
};

const median = (xs: readonly number[]): number =>
  percentile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

const redis = await startRedis();
const admin = new Redis(redis.url);
const evalUsec = async (): Promise<number> =>
  Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
const stores = await Promise.all(
  roots.map(async (root, i) => {
    const m = (await import(`${root}/dataplane/src/stores/index.ts`)) as typeof StoresModule;
    const s = m.createRedisStores({ url: redis.url }, { prefix: `p${i}` });
    await s.ready();
    return s;
  }),
);
try {
  const times = roots.map(() => ({
    admission: [] as number[],
    settlement: [] as number[],
    roundTrip: [] as number[],
  }));
  for (let i = 0; i < pairs + WARMUP; i++) {
    for (const [v, s] of stores.entries()) {
      const u0 = await evalUsec();
      const t0 = process.hrtime.bigint();
      const r = await s.admitter.admit(key, limits, 270, {
        ...key,
        budget,
        estimateUsd: 0.0001,
        reference: `r${i}`,
      });
      const t1 = process.hrtime.bigint();
      const u1 = await evalUsec();
      if (!r.reserve?.ok || !r.decision.ticket) throw new Error('not admitted');
      await s.settler!.settle({
        budget: { reservation: r.reserve.reservation, amountUsd: 0.0000447 },
        rate: { ticket: r.decision.ticket, actualTokens: 262 },
        record: record(`r${i}-${v}`),
      });
      const u2 = await evalUsec();
      if (i < WARMUP) continue;
      times[v]!.admission.push(u1 - u0);
      times[v]!.settlement.push(u2 - u1);
      times[v]!.roundTrip.push(Number(t1 - t0) / 1000);
    }
  }
  console.log(`Redis time per call, µs (trimmed mean of ${pairs}, the slowest tenth dropped)`);
  for (const [v, root] of roots.entries())
    console.log(
      `  ${root.padEnd(24)} admission ${trimmedMean(times[v]!.admission).toFixed(2)}  settlement ${trimmedMean(times[v]!.settlement).toFixed(2)}  admission round trip at the client (p50) ${median(times[v]!.roundTrip).toFixed(1)}`,
    );
} finally {
  admin.disconnect();
  await Promise.all(stores.map((s) => s.close()));
  await redis.stop();
}
