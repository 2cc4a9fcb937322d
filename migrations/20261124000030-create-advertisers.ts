import { binaryString, ciString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Advertisers (programmes joined on a network), keyed by (module, advertiser) as strings. The sync
 * owns the network's columns; name_override, local_logo, page_id and description are local edits
 * it never writes. A per-advertiser cashback override lives in cashback_rules.
 */
export const createAdvertisers: Migration = {
  name: '20261124000030-create-advertisers',
  async up({ qi, dialect, types }) {
    const text = dialect === 'mysql' ? types.TEXT('medium') : types.TEXT;
    await qi.createTable(
      'advertisers',
      {
        id: primaryKey(dialect),
        module: binaryString(dialect, 64),
        advertiser: binaryString(dialect, 128),
        name: ciString(dialect, 191),
        name_override: ciString(dialect, 191, true),
        domain: { type: types.STRING(191), allowNull: true },
        site_url: { type: types.STRING(1000), allowNull: true },
        logo_url: { type: types.STRING(1000), allowNull: true },
        local_logo: { type: types.STRING(1000), allowNull: true },
        tracking_template: { type: types.STRING(2000), allowNull: true },
        commission_type: { type: types.STRING(16), allowNull: true },
        commission_min: { type: types.STRING(32), allowNull: true },
        commission_max: { type: types.STRING(32), allowNull: true },
        commission_currency: { type: types.CHAR(3), allowNull: true },
        validation_days: { type: types.INTEGER, allowNull: true },
        /** JSON arrays of strings. */
        categories: { type: types.TEXT, allowNull: true },
        countries: { type: types.TEXT, allowNull: true },
        status: { type: types.STRING(16), allowNull: false, defaultValue: 'active' },
        page_id: { type: types.BIGINT, allowNull: true },
        description: { type: types.TEXT, allowNull: true },
        /** The network's own record (JSON). */
        raw: { type: text, allowNull: true },
        /** Number of the last sync of this module that listed the advertiser. */
        last_seen_sync: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        created_at: timestamp(),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('advertisers', ['module', 'advertiser'], { unique: true, name: 'advertisers_key' });
    await qi.addIndex('advertisers', ['name'], { name: 'advertisers_name' });
    await qi.addIndex('advertisers', ['module', 'status', 'name'], { name: 'advertisers_module_status_name' });
    await qi.addIndex('advertisers', ['updated_at'], { name: 'advertisers_updated' });
    await qi.addIndex('advertisers', ['module', 'last_seen_sync'], { name: 'advertisers_module_seen' });
  },
  async down({ qi }) {
    await qi.dropTable('advertisers');
  },
};
