import { primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Outgoing webhook subscriptions: where to POST which events, with a secret (sealed with the
 * configured secret, shown once) and the run of failed attempts that disables a subscription.
 */
export const createWebhooks: Migration = {
  name: '20261126000500-create-webhooks',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'webhooks',
      {
        id: primaryKey(dialect),
        url: { type: types.STRING(2048), allowNull: false },
        /** JSON array of event names. */
        events: { type: types.TEXT, allowNull: false },
        /** The `whsec_` secret, sealed (SecretBox, bound to the subscription id). */
        secret: { type: types.TEXT, allowNull: false },
        description: { type: types.STRING(500), allowNull: true },
        enabled: { type: types.BOOLEAN, allowNull: false, defaultValue: true },
        disabled_reason: { type: types.STRING(500), allowNull: true },
        disabled_at: timestamp(true),
        /** Failed attempts in a row (any success resets it). */
        failure_count: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        actor: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
  },
  async down({ qi }) {
    await qi.dropTable('webhooks');
  },
};
