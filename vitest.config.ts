import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'crds/src/**/*.test.ts',
      'dataplane/src/**/*.test.ts',
      'operator/src/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    testTimeout: 20000,
    hookTimeout: 60000,
    pool: 'forks',
    // vitest 3 runs `os.availableParallelism() - 1` workers by default: on a 2-core machine one,
    // so the files ran one after another using 0.9 of a core (they wait on the gateways they
    // spawn, redis, Milvus Lite, npm ci). Two keep both cores busy: 770 s -> 562 s on 2 cores.
    // Files share the servers only under their own key and collection prefixes.
    maxWorkers: 2,
    globalSetup: ['test/harness/global-setup.ts'],
  },
});
