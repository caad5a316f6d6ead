/**
 * vitest globalSetup: starts the real servers the suites need once per run (redis-server and
 * a Milvus Lite gRPC server) and stops them when the run ends. Nothing is skipped: a missing
 * redis-server or Milvus Lite is installed first.
 */
import type { TestProject } from 'vitest/node';
import { MILVUS_ADDRESS_ENV, startMilvus } from './milvus.ts';
import { REDIS_URL_ENV, startRedis } from './redis.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    milvusAddress: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Both start in parallel (Milvus Lite takes a second or two to import its engine); if one
  // fails, the other is stopped before the error surfaces.
  const [r, m] = await Promise.allSettled([startRedis(), startMilvus()]);
  if (r.status === 'rejected' || m.status === 'rejected') {
    if (r.status === 'fulfilled') await r.value.stop();
    if (m.status === 'fulfilled') await m.value.stop();
    throw r.status === 'rejected' ? r.reason : (m as PromiseRejectedResult).reason;
  }
  const redis = r.value;
  const milvus = m.value;
  // Workers inherit the env of the main process; provide() serves tests that prefer inject().
  process.env[REDIS_URL_ENV] = redis.url;
  process.env[MILVUS_ADDRESS_ENV] = milvus.address;
  project.provide('redisUrl', redis.url);
  project.provide('milvusAddress', milvus.address);
  return async () => {
    await Promise.all([redis.stop(), milvus.stop()]);
  };
}
