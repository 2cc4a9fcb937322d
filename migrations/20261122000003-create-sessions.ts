import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

export const createSessions: Migration = {
  name: '20261122000003-create-sessions',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'sessions',
      {
        id: primaryKey(dialect),
        uuid: binaryString(dialect, 36),
        token_hash: binaryString(dialect, 64),
        user_id: { ...foreignKey(dialect), references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
        created_at: timestamp(),
        expires_at: timestamp(),
        revoked_at: timestamp(true),
        ip: { type: types.STRING(45), allowNull: true },
        user_agent: { type: types.STRING(255), allowNull: true },
      },
      tableOptions(dialect),
    );
    await qi.addIndex('sessions', ['uuid'], { unique: true, name: 'sessions_uuid' });
    await qi.addIndex('sessions', ['token_hash'], { unique: true, name: 'sessions_token_hash' });
    await qi.addIndex('sessions', ['user_id'], { name: 'sessions_user' });
    await qi.addIndex('sessions', ['expires_at'], { name: 'sessions_expires' });
  },
  async down({ qi }) {
    await qi.dropTable('sessions');
  },
};
