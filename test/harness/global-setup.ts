/**
 * vitest globalSetup: starts the real servers the suites need once per run (redis-server now;
 * Milvus Lite joins here later) and stops them when the run ends. Nothing is skipped: a missing
 * redis-server is installed first.
 */
import type { TestProject } from 'vitest/node';
import { REDIS_URL_ENV, startRedis } from './redis.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startRedis();
  // Workers inherit the env of the main process; provide() serves tests that prefer inject().
  process.env[REDIS_URL_ENV] = redis.url;
  project.provide('redisUrl', redis.url);
  return async () => {
    await redis.stop();
  };
}
