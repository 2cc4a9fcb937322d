import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** Every postback received (while postbacks are on), with its outcome; pruned after the retention. */
export const createPostbacks: Migration = {
  name: '20261124000011-create-postbacks',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'postbacks',
      {
        id: primaryKey(dialect),
        received_at: timestamp(),
        network: binaryString(dialect, 64),
        ip: { type: types.STRING(45), allowNull: true },
        method: { type: types.STRING(8), allowNull: false },
        /** Query and body parameters, secrets redacted (JSON). */
        params: { type: types.TEXT, allowNull: true },
        outcome: { type: types.STRING(16), allowNull: false },
        code: { type: types.STRING(64), allowNull: true },
        message: { type: types.STRING(500), allowNull: true },
        transaction_id: { type: types.STRING(191), allowNull: true },
        status: { type: types.STRING(16), allowNull: true },
        order_id: foreignKey(dialect, true),
        test: { type: types.BOOLEAN, allowNull: false, defaultValue: false },
        request_id: { type: types.STRING(32), allowNull: true },
        /** Hash of an accepted HMAC signature: the same signed request again is answered, not re-applied. */
        replay_key: binaryString(dialect, 64, true),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('postbacks', ['network', 'id'], { name: 'postbacks_network' });
    await qi.addIndex('postbacks', ['network', 'outcome', 'id'], { name: 'postbacks_network_outcome' });
    await qi.addIndex('postbacks', ['received_at'], { name: 'postbacks_received' });
    await qi.addIndex('postbacks', ['replay_key'], { unique: true, name: 'postbacks_replay_key' });
    await qi.addIndex('postbacks', ['request_id'], { name: 'postbacks_request' });
  },
  async down({ qi }) {
    await qi.dropTable('postbacks');
  },
};
