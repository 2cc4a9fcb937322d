import { binaryString, ciString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Coupons and deals imported from the networks, keyed by (network, coupon_id): the network's own
 * id, as a string. A refresh merges into a row, never replaces it: fields an administrator edited
 * (`edited_fields`) and text the AI wrote (`ai_fields`) keep their value, and the network's latest
 * value for each of them waits in `network_values` so a reset gives it back without a refresh.
 * `original_title` / `original_description` keep the text from before the first AI rewrite for
 * `revert`. `content_hash` is the hash of the network's record as last stored: a refresh skips
 * a coupon whose record did not change. Same columns on both dialects.
 */
export const createCoupons: Migration = {
  name: '20261126000300-create-coupons',
  async up({ qi, dialect, types }) {
    const text = dialect === 'mysql' ? types.TEXT('medium') : types.TEXT;
    await qi.createTable(
      'coupons',
      {
        id: primaryKey(dialect),
        network: binaryString(dialect, 64),
        /** The network's advertiser id (advertisers.advertiser of the same module). */
        advertiser: binaryString(dialect, 128),
        coupon_id: binaryString(dialect, 128),
        /** '' for a deal (no code to type). */
        code: ciString(dialect, 191),
        title: { type: types.STRING(500), allowNull: false },
        description: { type: types.TEXT, allowNull: true },
        terms: { type: types.TEXT, allowNull: true },
        discount_type: { type: types.STRING(16), allowNull: false, defaultValue: 'other' },
        discount_value: { type: types.STRING(32), allowNull: true },
        discount_currency: { type: types.CHAR(3), allowNull: true },
        discount_text: { type: types.STRING(191), allowNull: true },
        landing_url: { type: types.STRING(2000), allowNull: true },
        /** The network's own link for the coupon (kept for reference; members get a link built at read). */
        network_url: { type: types.STRING(2000), allowNull: true },
        starts_at: timestamp(true),
        ends_at: timestamp(true),
        exclusive: { type: types.BOOLEAN, allowNull: false, defaultValue: false },
        /** JSON array of ISO-3166 alpha-2 codes; [] means everywhere. */
        regions: { type: types.TEXT, allowNull: true },
        /** active | scheduled | expired | removed, as of the last refresh or edit (reads recompute it from the dates). */
        status: { type: types.STRING(16), allowNull: false, defaultValue: 'active' },
        /** JSON arrays of field names. */
        edited_fields: { type: types.TEXT, allowNull: true },
        ai_fields: { type: types.TEXT, allowNull: true },
        /** JSON object: field -> the network's latest value, for every edited or AI-written field. */
        network_values: { type: types.TEXT, allowNull: true },
        original_title: { type: types.STRING(500), allowNull: true },
        original_description: { type: types.TEXT, allowNull: true },
        /**
         * JSON object: for each field the AI rewrote, who owned its text before the first rewrite
         * (`network` or `edited`): revert gives a network field back to the network and keeps an
         * administrator's text as an edit. A field listed here has its original in original_*.
         */
        original_owners: { type: types.TEXT, allowNull: true },
        content_hash: binaryString(dialect, 64, true),
        /** The network's own record (JSON). */
        raw: { type: text, allowNull: true },
        /** Number of the last full refresh of this network that listed the coupon. */
        last_seen_refresh: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        created_at: timestamp(),
        updated_at: timestamp(),
        removed_at: timestamp(true),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('coupons', ['network', 'coupon_id'], { unique: true, name: 'coupons_key' });
    await qi.addIndex('coupons', ['network', 'advertiser'], { name: 'coupons_advertiser' });
    await qi.addIndex('coupons', ['network', 'last_seen_refresh'], { name: 'coupons_network_seen' });
    await qi.addIndex('coupons', ['status', 'ends_at'], { name: 'coupons_status_ends' });
    await qi.addIndex('coupons', ['ends_at'], { name: 'coupons_ends' });
    await qi.addIndex('coupons', ['updated_at'], { name: 'coupons_updated' });
  },
  async down({ qi }) {
    await qi.dropTable('coupons');
  },
};
