import { binaryString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** Idempotency-Key records: the first request's outcome, replayed to retries for at least 24 h. */
export const createIdempotencyKeys: Migration = {
  name: '20261122000009-create-idempotency-keys',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'idempotency_keys',
      {
        id: primaryKey(dialect),
        scope: binaryString(dialect, 64),
        idem_key: binaryString(dialect, 255),
        request_hash: binaryString(dialect, 64),
        state: { type: types.STRING(8), allowNull: false },
        response_status: { type: types.INTEGER, allowNull: true },
        response_body: { type: dialect === 'mysql' ? 'MEDIUMTEXT' : types.TEXT, allowNull: true },
        created_at: timestamp(),
        expires_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('idempotency_keys', ['scope', 'idem_key'], { unique: true, name: 'idempotency_keys_key' });
    await qi.addIndex('idempotency_keys', ['expires_at'], { name: 'idempotency_keys_expires' });
  },
  async down({ qi }) {
    await qi.dropTable('idempotency_keys');
  },
};
