import { binaryString, type Migration } from '../src/db/migration.js';

/**
 * Idempotency keys belong to their caller (`user:<id>` over REST, `cli` on the command line): the
 * same key chosen by two administrators is two keys, so one can never be answered with the
 * other's recorded response. Records made before this migration have the owner '' and so match
 * no caller; they expire within 48 hours.
 */
export const scopeIdempotencyKeys: Migration = {
  name: '20261125000201-scope-idempotency-keys',
  async up({ qi, dialect }) {
    await qi.addColumn('idempotency_keys', 'owner', { ...binaryString(dialect, 64), defaultValue: '' });
    await qi.removeIndex('idempotency_keys', 'idempotency_keys_key');
    await qi.addIndex('idempotency_keys', ['scope', 'owner', 'idem_key'], { unique: true, name: 'idempotency_keys_key' });
  },
  async down({ qi, sequelize }) {
    // Owners' keys may collide once the owner is gone: keep one record per (scope, key).
    await sequelize.query(
      'DELETE FROM idempotency_keys WHERE id NOT IN (SELECT id FROM (SELECT MIN(id) AS id FROM idempotency_keys GROUP BY scope, idem_key) AS keep)',
    );
    await qi.removeIndex('idempotency_keys', 'idempotency_keys_key');
    await qi.addIndex('idempotency_keys', ['scope', 'idem_key'], { unique: true, name: 'idempotency_keys_key' });
    await qi.removeColumn('idempotency_keys', 'owner');
  },
};
