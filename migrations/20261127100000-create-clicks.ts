import { binaryString, foreignKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Members' clicks through `/go/{token}` to a shop. `id` is the click id the network carries back
 * in its sub-id field: "c" and 18 lowercase base-32 characters (the time in milliseconds, then 40
 * random bits), so it fits every network's sub-id (Admitad keeps 50 characters, Rakuten's u1
 * alphanumerics only), sorts by time, and never reads as a member's numeric id. `cashback_rule` is
 * the rule shown at the click ("type:value[:CUR]", as on orders). No raw client data: the address
 * reduced to its /24 (IPv4) or /48 (IPv6) network, and a keyed hash of the user agent.
 */
export const createClicks: Migration = {
  name: '20261127100000-create-clicks',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'clicks',
      {
        id: { ...binaryString(dialect, 24), primaryKey: true },
        member_id: foreignKey(dialect),
        network: binaryString(dialect, 64),
        advertiser: binaryString(dialect, 128),
        coupon_id: foreignKey(dialect, true),
        url: { type: types.STRING(2000), allowNull: true },
        cashback_rule: { type: types.STRING(64), allowNull: false },
        ip_prefix: binaryString(dialect, 64, true),
        ua_hash: binaryString(dialect, 32, true),
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('clicks', ['member_id', 'created_at'], { name: 'clicks_member_created' });
    await qi.addIndex('clicks', ['network', 'advertiser', 'created_at'], { name: 'clicks_shop_created' });
    await qi.addIndex('clicks', ['created_at'], { name: 'clicks_created' });
  },
  async down({ qi }) {
    await qi.dropTable('clicks');
  },
};
