import { binaryString, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Refused postbacks counted per network and client address (an IPv6 client by its /64) in a
 * fixed window, shared by every daemon: past the limit, the client's postbacks are answered 429
 * without being stored. One row per (network, client); pruned once its window is long over.
 */
export const createPostbackRejections: Migration = {
  name: '20261125000301-create-postback-rejections',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'postback_rejections',
      {
        network: { ...binaryString(dialect, 64), primaryKey: true },
        /** An IPv4 address, `<first four groups>::/64` of an IPv6 one, or `unknown`. */
        client: { ...binaryString(dialect, 64), primaryKey: true },
        window_start: timestamp(),
        /** Every refusal in the window (the aggregation threshold). */
        refusals: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        /** Refusals before the sender proved it holds the network's secret (the throttle). */
        unauthenticated: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('postback_rejections', ['window_start'], { name: 'postback_rejections_window' });
  },
  async down({ qi }) {
    await qi.dropTable('postback_rejections');
  },
};
