import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Engine tests load PDFium (one native binding per process) and talk to real
    // Postgres and Redis; forks keep each file isolated.
    pool: 'forks',
    maxWorkers: 2,
  },
});
