// `npm run test:galera`: the several-daemons checks on a three-node MariaDB Galera cluster, each
// daemon on its own node (test/galera/). Opt-in, not part of `npm test`: it needs the cluster
// running (see test/galera/cluster.ts and docs/operations.md, "Past one database server").
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/galera/**/*.galera.ts'],
    globalSetup: ['test/galera/cluster.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
    env: { CASHTRACK_ENV: 'test' },
  },
});
