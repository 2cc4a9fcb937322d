import { tableOptions, type Migration } from '../src/db/migration.js';

/** Exact running totals kept beside the rows, so an unfiltered list never counts a large table. */
export const createCounters: Migration = {
  name: '20261122000006-create-counters',
  async up({ qi, dialect, sequelize, types }) {
    await qi.createTable(
      'counters',
      {
        name: { type: types.STRING(64), primaryKey: true, allowNull: false },
        value: { type: types.BIGINT, allowNull: false, defaultValue: 0 },
      },
      tableOptions(dialect),
    );
    await sequelize.query("INSERT INTO counters (name, value) SELECT 'logs', COUNT(*) FROM logs");
  },
  async down({ qi }) {
    await qi.dropTable('counters');
  },
};
