/**
 * Budget settle, rate adjust and usage record in one script, pipelined with the global tenant
 * index's SADD (outside the tenant's slot, so not in the script): one write, one round trip,
 * two commands for the whole settlement of a metered request.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { Settler, SettlementRequest } from '../settlement.ts';
import type { RedisUsageStore } from '../usage/redis.ts';
import { settleMicros, type RedisBudgetStore } from './budget.ts';
import { toStoreError } from './client.ts';
import { settleScript } from './lua/settle.ts';
import type { RedisRateLimiter } from './rate-limiter.ts';
import { int, type ScriptArg } from './script.ts';

type ScriptCommand = (...args: ScriptArg[]) => ChainableCommander;

export class RedisSettler implements Settler {
  constructor(
    private readonly client: Redis,
    private readonly rateLimiter: RedisRateLimiter,
    private readonly budgets: RedisBudgetStore,
    private readonly usage: RedisUsageStore,
  ) {
    client.defineCommand(settleScript.name, { lua: settleScript.lua });
  }

  async settle(req: SettlementRequest): Promise<void> {
    const budget = req.budget
      ? this.budgets.settleCall(req.budget.reservation, settleMicros(req.budget.amountUsd))
      : undefined;
    const rate = req.rate ? this.rateLimiter.adjustCall(req.rate.ticket, req.rate.actualTokens) : undefined;
    const record = this.usage.recordCall(req.record);
    const keys: string[] = [];
    const args: ScriptArg[] = [budget ? '1' : '0', rate ? '1' : '0'];
    for (const part of [budget, rate, record]) {
      if (!part) continue;
      for (const k of part.keys) keys.push(k);
      for (const a of part.args) args.push(a);
    }
    const p = this.client.pipeline();
    const script = (p as unknown as Record<string, ScriptCommand>)[settleScript.name];
    if (!script) throw new Error(`defineCommand did not install ${settleScript.name}`);
    script.call(p, keys.length, ...keys, ...args);
    p.sadd(record.tenantsKey, record.tenant);
    let results: [Error | null, unknown][] | null;
    try {
      results = await p.exec();
    } catch (err) {
      throw toStoreError('settlement', err);
    }
    if (!results) throw toStoreError('settlement', new Error('pipeline discarded'));
    for (const [err] of results) if (err) throw toStoreError('settlement', err);
    const reply = results[0]?.[1];
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error('settlement script: unexpected reply');
    if (budget) budget.result(reply[0]);
    int(reply[1], 'settlement rate');
    int(reply[2], 'settlement usage');
  }
}
