import { binaryString, ciString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

export const createAppPasswords: Migration = {
  name: '20261122000002-create-app-passwords',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'app_passwords',
      {
        id: primaryKey(dialect),
        uuid: binaryString(dialect, 36),
        user_id: { ...foreignKey(dialect), references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
        name: ciString(dialect, 191),
        hash: binaryString(dialect, 64),
        created_at: timestamp(),
        last_used_at: timestamp(true),
        last_ip: { type: types.STRING(45), allowNull: true },
      },
      tableOptions(dialect),
    );
    await qi.addIndex('app_passwords', ['uuid'], { unique: true, name: 'app_passwords_uuid' });
    await qi.addIndex('app_passwords', ['hash'], { unique: true, name: 'app_passwords_hash' });
    await qi.addIndex('app_passwords', ['user_id', 'name'], { unique: true, name: 'app_passwords_user_name' });
  },
  async down({ qi }) {
    await qi.dropTable('app_passwords');
  },
};
