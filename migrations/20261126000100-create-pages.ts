import { binaryString, ciString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Shop pages: one per advertiser (advertiser_id is unique), with a unique slug. module and
 * advertiser repeat the advertiser's key (it never changes) so pages filter and show it without a
 * join. Title and slug compare case-insensitively so a prefix LIKE (lookups, search) uses their
 * indexes on both dialects.
 */
export const createPages: Migration = {
  name: '20261126000100-create-pages',
  async up({ qi, dialect, types }) {
    const text = dialect === 'mysql' ? types.TEXT('medium') : types.TEXT;
    await qi.createTable(
      'pages',
      {
        id: primaryKey(dialect),
        advertiser_id: foreignKey(dialect),
        module: binaryString(dialect, 64),
        advertiser: binaryString(dialect, 128),
        title: ciString(dialect, 200),
        slug: ciString(dialect, 200),
        body: { type: text, allowNull: false },
        excerpt: { type: types.TEXT, allowNull: false },
        status: { type: types.STRING(16), allowNull: false },
        template: { type: types.STRING(64), allowNull: true },
        author: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
        updated_at: timestamp(),
        published_at: timestamp(true),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('pages', ['advertiser_id'], { unique: true, name: 'pages_advertiser' });
    await qi.addIndex('pages', ['slug'], { unique: true, name: 'pages_slug' });
    await qi.addIndex('pages', ['title'], { name: 'pages_title' });
    await qi.addIndex('pages', ['status', 'id'], { name: 'pages_status' });
    await qi.addIndex('pages', ['module', 'advertiser'], { name: 'pages_module_advertiser' });
  },
  async down({ qi }) {
    await qi.dropTable('pages');
  },
};
