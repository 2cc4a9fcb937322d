import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Refuses a CI run that would test SQLite alone (no CASHTRACK_TEST_MYSQL_URL).
    globalSetup: ['test/setup/dialects.ts'],
    pool: 'forks',
    fileParallelism: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { CASHTRACK_ENV: 'test' },
    coverage: {
      // On for `npm test` (`--coverage`); a hand-run `vitest run test/...` stays fast without it.
      provider: 'v8',
      include: ['src/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      // The figures are worth seeing on a red run too.
      reportOnFailure: true,
      // Today's figures rounded down: a change may raise them, never lower them.
      thresholds: {},
    },
  },
});
