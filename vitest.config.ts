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
    globalSetup: ['test/harness/global-setup.ts'],
  },
});
