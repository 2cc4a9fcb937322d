import { binaryString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Media (shop logos): re-encoded image bytes stored in the database, so every daemon behind a
 * balancer serves the same files. Content-addressed: `sha256` of the stored bytes is unique, and a
 * row is never changed once written (its URL is cached as immutable). Advertisers refer to a row
 * by its file name `<sha256>.<ext>` in `advertisers.local_logo`. MEDIUMBLOB on MariaDB (a BLOB
 * stops at 64 KiB); the service bounds the stored size well below either limit.
 */
export const createMedia: Migration = {
  name: '20261126000200-create-media',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'media',
      {
        id: primaryKey(dialect),
        sha256: binaryString(dialect, 64),
        type: { type: types.STRING(32), allowNull: false },
        ext: { type: types.STRING(8), allowNull: false },
        width: { type: types.INTEGER, allowNull: false },
        height: { type: types.INTEGER, allowNull: false },
        bytes: { type: types.INTEGER, allowNull: false },
        data: { type: dialect === 'mysql' ? 'MEDIUMBLOB' : types.BLOB, allowNull: false },
        /** Where the original came from (the first fetch that produced these bytes). */
        source_url: { type: types.STRING(2000), allowNull: true },
        fetched_at: timestamp(true),
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('media', ['sha256'], { unique: true, name: 'media_sha256' });
  },
  async down({ qi }) {
    await qi.dropTable('media');
  },
};
