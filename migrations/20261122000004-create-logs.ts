import { primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

export const createLogs: Migration = {
  name: '20261122000004-create-logs',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'logs',
      {
        id: primaryKey(dialect),
        created_at: timestamp(),
        level: { type: types.STRING(8), allowNull: false },
        source: { type: types.STRING(64), allowNull: false },
        message: { type: types.TEXT, allowNull: false },
        context: { type: types.TEXT, allowNull: true },
        request_id: { type: types.STRING(32), allowNull: true },
      },
      tableOptions(dialect),
    );
    // Newest-first lists filter by level or source and page by id; retention deletes by time.
    await qi.addIndex('logs', ['created_at'], { name: 'logs_created' });
    await qi.addIndex('logs', ['level', 'id'], { name: 'logs_level_id' });
    await qi.addIndex('logs', ['source', 'id'], { name: 'logs_source_id' });
  },
  async down({ qi }) {
    await qi.dropTable('logs');
  },
};
