import { binaryString, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Affiliate networks: a row per custom network, and per built-in network once it is configured or
 * switched. Secrets are stored only as keyed hashes or AES-256-GCM ciphertext.
 */
export const createNetworks: Migration = {
  name: '20261124000010-create-networks',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'networks',
      {
        id: { ...binaryString(dialect, 64), primaryKey: true },
        kind: { type: types.STRING(16), allowNull: false },
        name: { type: types.STRING(191), allowNull: false },
        currency: { type: types.CHAR(3), allowNull: false },
        enabled: { type: types.BOOLEAN, allowNull: false, defaultValue: false },
        postbacks_enabled: { type: types.BOOLEAN, allowNull: false, defaultValue: false },
        /** Non-secret module settings (JSON object). */
        settings: { type: types.TEXT, allowNull: true },
        /** Secret module settings: a JSON object, encrypted. */
        secret_settings: { type: types.TEXT, allowNull: true },
        /** A custom network's definition (JSON); null for built-ins. */
        definition: { type: types.TEXT, allowNull: true },
        postback_mode: { type: types.STRING(8), allowNull: false, defaultValue: 'token' },
        /** `h1:<hex>` keyed hash of a token, or `e1:<...>` the encrypted HMAC secret. */
        postback_secret: { type: types.TEXT, allowNull: true },
        postback_secret_set_at: timestamp(true),
        /** The secret before the last rotation, valid until `postback_previous_until`. */
        postback_previous_secret: { type: types.TEXT, allowNull: true },
        postback_previous_until: timestamp(true),
        /** JSON array of CIDRs; null or empty: any address. */
        postback_ip_allowlist: { type: types.TEXT, allowNull: true },
        last_sync_at: timestamp(true),
        last_sync_result: { type: types.TEXT, allowNull: true },
        last_error: { type: types.STRING(1000), allowNull: true },
        last_error_at: timestamp(true),
        created_at: timestamp(),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
  },
  async down({ qi }) {
    await qi.dropTable('networks');
  },
};
