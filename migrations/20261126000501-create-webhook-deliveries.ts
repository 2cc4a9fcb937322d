import { binaryString, foreignKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * The webhook outbox and delivery log: one row per event and subscription, written in the
 * transaction of the change it reports, then sent (and retried) by whichever daemon claims it.
 */
export const createWebhookDeliveries: Migration = {
  name: '20261126000501-create-webhook-deliveries',
  async up({ qi, dialect, types }) {
    const longText = dialect === 'mysql' ? 'MEDIUMTEXT' : types.TEXT;
    await qi.createTable(
      'webhook_deliveries',
      {
        /** `msg_...`: the `webhook-id` of every attempt. */
        id: { ...binaryString(dialect, 40), primaryKey: true },
        webhook_id: foreignKey(dialect),
        event: { type: types.STRING(64), allowNull: false },
        /** The exact body sent on every attempt. */
        payload: { type: longText, allowNull: false },
        /** pending | failed (a retry is due) | delivered | dead. */
        status: { type: types.STRING(16), allowNull: false },
        attempts: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        /** When a sender may take it next (due time, or the end of a sender's lease); NULL: nothing to send. */
        next_attempt_at: timestamp(true),
        /** The token of the sender attempting it now: only that sender records the outcome. */
        claim: binaryString(dialect, 32, true),
        last_status: { type: types.INTEGER, allowNull: true },
        last_error: { type: types.STRING(500), allowNull: true },
        duration_ms: { type: types.INTEGER, allowNull: true },
        created_at: timestamp(),
        updated_at: timestamp(),
        delivered_at: timestamp(true),
      },
      tableOptions(dialect),
    );
    // Senders walk the due deliveries; the log lists one subscription's newest first; pruning by age.
    await qi.addIndex('webhook_deliveries', ['next_attempt_at'], { name: 'webhook_deliveries_due' });
    await qi.addIndex('webhook_deliveries', ['webhook_id', 'id'], { name: 'webhook_deliveries_webhook' });
    await qi.addIndex('webhook_deliveries', ['created_at'], { name: 'webhook_deliveries_created' });
  },
  async down({ qi }) {
    await qi.dropTable('webhook_deliveries');
  },
};
