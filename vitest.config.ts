import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The bot's build (dist/), which the tests that start it with `npm start` run.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end tests start real servers on loopback; two cores are all we have.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
