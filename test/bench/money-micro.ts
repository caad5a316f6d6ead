/**
 * Store-level measurement of the metered path's Redis work, one call at a time as at one
 * connection: admission (rate limit + budget hold) then settlement (budget settle + token
 * correction + usage record), against a private redis-server. Reports the client's round
 * trip p50 for each and a PING, the client CPU per pair, and Redis' own time per script
 * (SLOWLOG at threshold 0, split by script). Run: `npx tsx test/bench/money-micro.ts [iterations]`;
 * MONEY_MICRO_ROOT=<checkout> measures another checkout's stores.
 */
import { Redis } from 'ioredis';
import { startRedis } from '../harness/redis.ts';
import type * as StoresModule from '../../dataplane/src/stores/index.ts';
import { budget, key, limits, record } from './money-fixture.ts';
import { percentile } from './stats.ts';

const iterations = Number(process.argv[2] ?? 4000);
const pct = (xs: number[], p: number): number =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p / 100,
  );

async function main(): Promise<void> {
  // MONEY_MICRO_ROOT=<checkout> measures another checkout's stores (a baseline).
  const root = process.env.MONEY_MICRO_ROOT ?? new URL('../..', import.meta.url).pathname;
  const { createRedisStores } = (await import(
    `${root}/dataplane/src/stores/index.ts`
  )) as typeof StoresModule;
  const redis = await startRedis();
  const stores = createRedisStores({ url: redis.url });
  await stores.ready();
  const admin = new Redis(redis.url);
  const settler = stores.settler!;
  try {
    const issue: number[] = [];
    const pingIssue: number[] = [];
    const pair = async (i: number, times?: { admit: number[]; settle: number[] }) => {
      const t0 = process.hrtime.bigint();
      const pending = stores.admitter.admit(key, limits, 270, {
        tenant: key.tenant,
        keyId: key.keyId,
        budget,
        estimateUsd: 0.0001,
        autoRecharge: undefined,
        reference: `req-${i}`,
      });
      if (times) issue.push(Number(process.hrtime.bigint() - t0) / 1000);
      const r = await pending;
      const t1 = process.hrtime.bigint();
      if (!r.reserve?.ok || !r.decision.ticket) throw new Error('not admitted');
      await settler.settle({
        budget: { reservation: r.reserve.reservation, amountUsd: 0.0000447 },
        rate: { ticket: r.decision.ticket, actualTokens: 262 },
        record: record(`req-${i}`),
      });
      const t2 = process.hrtime.bigint();
      times?.admit.push(Number(t1 - t0) / 1000);
      times?.settle.push(Number(t2 - t1) / 1000);
    };
    // Warm-up fills the window and the JIT.
    for (let i = 0; i < 2000; i++) await pair(i);
    const pings: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const t0 = process.hrtime.bigint();
      const p = admin.ping();
      pingIssue.push(Number(process.hrtime.bigint() - t0) / 1000);
      await p;
      pings.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    // Unlogged first: Redis' mean time per script call (admission and settlement alike) and
    // the calls made inside them, from INFO commandstats.
    await admin.config('RESETSTAT');
    const times = { admit: [] as number[], settle: [] as number[] };
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < iterations; i++) await pair(100_000 + i, times);
    const cpu = process.cpuUsage(cpu0);
    const stats = await admin.info('commandstats');
    // Then logged: SLOWLOG splits the time by script (each nested call is logged too, which
    // inflates the scripts by about half a microsecond per call).
    const logged = Math.min(iterations, 1000);
    await admin.config('SET', 'slowlog-log-slower-than', '0');
    await admin.config('SET', 'slowlog-max-len', String(logged * 60));
    await admin.slowlog('RESET');
    for (let i = 0; i < logged; i++) await pair(200_000 + i);
    const log = (await admin.slowlog('GET', logged * 60)) as [number, number, number, string[]][];
    await admin.config('SET', 'slowlog-log-slower-than', '10000');
    const byScript = new Map<string, number[]>();
    for (const [, , usec, argv] of log) {
      const name = argv[0]?.toLowerCase() === 'evalsha' ? `evalsha:${argv[2]}keys` : (argv[0] ?? '?');
      const list = byScript.get(name) ?? [];
      list.push(usec);
      byScript.set(name, list);
    }
    const f = (v: number) => v.toFixed(1).padStart(7);
    console.log(`iterations ${iterations}`);
    console.log(`client round trip µs   p50     p90     p99`);
    console.log(`  PING             ${f(pct(pings, 50))} ${f(pct(pings, 90))} ${f(pct(pings, 99))}`);
    console.log(
      `  PING issue (sync)${f(pct(pingIssue, 50))} ${f(pct(pingIssue, 90))} ${f(pct(pingIssue, 99))}`,
    );
    console.log(`  admission issue  ${f(pct(issue, 50))} ${f(pct(issue, 90))} ${f(pct(issue, 99))}`);
    console.log(
      `  admission        ${f(pct(times.admit, 50))} ${f(pct(times.admit, 90))} ${f(pct(times.admit, 99))}`,
    );
    console.log(
      `  settlement       ${f(pct(times.settle, 50))} ${f(pct(times.settle, 90))} ${f(pct(times.settle, 99))}`,
    );
    console.log(`client CPU per pair ${((cpu.user + cpu.system) / iterations).toFixed(1)} µs`);
    let scriptCalls = 0;
    let scriptUsec = 0;
    let nested = 0;
    for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      if (m[1] === 'evalsha') {
        scriptCalls = Number(m[2]);
        scriptUsec = Number(m[3]);
      } else nested += Number(m[2]);
    }
    console.log(
      `redis (commandstats): ${(scriptUsec / scriptCalls).toFixed(1)} µs per script call, ${(nested / iterations).toFixed(1)} other calls per pair`,
    );
    console.log(`redis time µs (slowlog)  calls   p50   mean`);
    for (const [name, xs] of [...byScript].filter(([n]) => n.startsWith('evalsha')))
      console.log(
        `  ${name.padEnd(22)} ${String(xs.length).padStart(5)} ${f(pct(xs, 50))} ${f(xs.reduce((a, b) => a + b, 0) / xs.length)}`,
      );
  } finally {
    admin.disconnect();
    await stores.close();
    await redis.stop();
  }
}

await main();
