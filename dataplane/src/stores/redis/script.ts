/**
 * Binds a Lua script to a client with ioredis' defineCommand: EVALSHA normally (one round trip),
 * EVAL when the server lost its script cache (after a restart).
 */
import type { Redis } from 'ioredis';
import { toStoreError } from './client.ts';

export interface LuaScript {
  name: string;
  numberOfKeys: number;
  lua: string;
}

export type ScriptArg = string | number;
export type BoundScript = (keys: readonly string[], args: readonly ScriptArg[]) => Promise<unknown>;

type ScriptMethod = (...args: ScriptArg[]) => Promise<unknown>;

export function bindScript(client: Redis, script: LuaScript, operation: string): BoundScript {
  const run = defined(client, script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua }, operation);
  return async (keys, args) => {
    if (keys.length !== script.numberOfKeys)
      throw new Error(`${script.name}: expected ${script.numberOfKeys} keys`);
    return run(...keys, ...args);
  };
}

/**
 * A script whose number of keys varies by call (optional parts): defined without a key count,
 * so each call sends its own.
 */
export function bindVariadicScript(
  client: Redis,
  script: Omit<LuaScript, 'numberOfKeys'> & { maxKeys: number },
  operation: string,
): BoundScript {
  const run = defined(client, script.name, { lua: script.lua }, operation);
  return async (keys, args) => {
    if (keys.length > script.maxKeys) throw new Error(`${script.name}: at most ${script.maxKeys} keys`);
    return run(String(keys.length), ...keys, ...args);
  };
}

/** Installs the script on the client; calling it gives Redis' reply or a store error. */
function defined(
  client: Redis,
  name: string,
  definition: { numberOfKeys?: number; lua: string },
  operation: string,
): ScriptMethod {
  client.defineCommand(name, definition);
  const method = (client as unknown as Record<string, ScriptMethod>)[name];
  if (!method) throw new Error(`defineCommand did not install ${name}`);
  return async (...args) => {
    try {
      return await method.call(client, ...args);
    } catch (err) {
      throw toStoreError(operation, err);
    }
  };
}

/** Lua integers arrive as numbers; guard against a script returning something else. */
export function int(value: unknown, what: string): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw new Error(`redis script returned a non-number for ${what}`);
  return n;
}

/** Writes integers for Lua without exponent notation. */
export const arg = (n: number): string => {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer: ${n}`);
  return String(n);
};
