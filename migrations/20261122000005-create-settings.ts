import { tableOptions, type Migration } from '../src/db/migration.js';

export const createSettings: Migration = {
  name: '20261122000005-create-settings',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'settings',
      {
        name: { type: types.STRING(64), primaryKey: true, allowNull: false },
        value: { type: types.TEXT, allowNull: false },
      },
      tableOptions(dialect),
    );
  },
  async down({ qi }) {
    await qi.dropTable('settings');
  },
};
