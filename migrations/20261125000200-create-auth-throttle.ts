import { binaryString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Authentication-failure counters, in the database so that every daemon on it counts together and
 * no flood of other keys can push a counter out (an in-memory LRU could be flushed that way).
 * One row per (kind, key): `address` rows are keyed by the client's IPv4 address or IPv6 /64,
 * `user` rows by the user id the typed login or email resolved to.
 */
export const createAuthThrottle: Migration = {
  name: '20261125000200-create-auth-throttle',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'auth_throttle',
      {
        id: primaryKey(dialect),
        kind: binaryString(dialect, 16),
        throttle_key: binaryString(dialect, 64),
        failures: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        /** User rows: no attempt is checked before this time (the growing delay). */
        next_allowed_at: timestamp(true),
        /** When the counter is forgotten (and the row may be pruned). */
        reset_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('auth_throttle', ['kind', 'throttle_key'], { unique: true, name: 'auth_throttle_key' });
    await qi.addIndex('auth_throttle', ['reset_at'], { name: 'auth_throttle_reset' });
  },
  async down({ qi }) {
    await qi.dropTable('auth_throttle');
  },
};
