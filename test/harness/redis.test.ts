import { inject, describe, expect, it } from 'vitest';
import { findRedisServer, ping, startRedis, testRedisUrl } from './redis.ts';

const portOf = (url: string) => Number(new URL(url).port);

describe('redis harness', () => {
  it('exposes the shared server to workers through env and inject()', async () => {
    const url = testRedisUrl();
    expect(inject('redisUrl')).toBe(url);
    expect(await ping(portOf(url))).toBe(true);
    expect(findRedisServer()).toBeDefined();
  });

  it('starts a private server that can be stopped and restarted on the same port', async () => {
    const redis = await startRedis();
    try {
      expect(redis.url).not.toBe(testRedisUrl());
      expect(redis.running).toBe(true);
      expect(await ping(redis.port)).toBe(true);
      await redis.stop();
      expect(redis.running).toBe(false);
      expect(await ping(redis.port)).toBe(false);
      await redis.restart();
      expect(redis.running).toBe(true);
      expect(await ping(redis.port)).toBe(true);
      redis.pause();
      expect(await ping(redis.port, 200)).toBe(false);
      redis.resume();
      expect(await ping(redis.port)).toBe(true);
      redis.pause();
    } finally {
      // stop() also ends a paused server.
      await redis.stop();
    }
  });
});
