import { ciString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

export const createUsers: Migration = {
  name: '20261122000001-create-users',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'users',
      {
        id: primaryKey(dialect),
        login: ciString(dialect, 60),
        email: ciString(dialect, 191),
        display_name: ciString(dialect, 191),
        role: { type: types.STRING(32), allowNull: false },
        password_hash: { type: types.STRING(255), allowNull: true },
        status: { type: types.STRING(16), allowNull: false, defaultValue: 'active' },
        created_at: timestamp(),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('users', ['login'], { unique: true, name: 'users_login' });
    await qi.addIndex('users', ['email'], { unique: true, name: 'users_email' });
    await qi.addIndex('users', ['display_name'], { name: 'users_display_name' });
    await qi.addIndex('users', ['role'], { name: 'users_role' });
  },
  async down({ qi }) {
    await qi.dropTable('users');
  },
};
