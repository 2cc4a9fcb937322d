import { primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Exports as files: one row per requested export (kind, format, the exact validated filters in
 * `params` so it can be repeated), the `exports.run` job that writes it (no foreign key: finished
 * jobs are pruned on their own schedule), its outcome (status, row_count (`rows` is reserved on MariaDB), bytes, file name under
 * `<data_dir>/exports/`, error) and when the file expires (`exports.retention_days`).
 */
export const createExports: Migration = {
  name: '20261127142000-create-exports',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'exports',
      {
        id: primaryKey(dialect),
        kind: { type: types.STRING(32), allowNull: false },
        format: { type: types.STRING(8), allowNull: false },
        params: { type: types.TEXT, allowNull: false },
        status: { type: types.STRING(16), allowNull: false },
        row_count: { type: types.BIGINT, allowNull: false, defaultValue: 0 },
        bytes: { type: types.BIGINT, allowNull: false, defaultValue: 0 },
        file_name: { type: types.STRING(191), allowNull: true },
        job_id: { type: types.BIGINT, allowNull: true },
        actor: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
        finished_at: timestamp(true),
        expires_at: timestamp(true),
        error: { type: types.STRING(2000), allowNull: true },
      },
      tableOptions(dialect),
    );
    await qi.addIndex('exports', ['expires_at'], { name: 'exports_expires' });
    await qi.addIndex('exports', ['status', 'id'], { name: 'exports_status' });
  },
  async down({ qi }) {
    await qi.dropTable('exports');
  },
};
