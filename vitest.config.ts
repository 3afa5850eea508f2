import { defineConfig } from 'vitest/config';

// Unit tests are fast and use fake clocks; integration and e2e tests start real
// daemons, PTYs and MCP servers, so they get longer timeouts and fewer workers.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
