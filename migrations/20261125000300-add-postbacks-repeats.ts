import { binaryString, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Aggregated refusals: past `postbacks.rejections.aggregate_after` refusals from one address in a
 * window, refusals of one kind update one record (how many, and when the last came) instead of
 * each adding a row. `aggregate_key` names that record (network, client, kind, window).
 */
export const addPostbacksRepeats: Migration = {
  name: '20261125000300-add-postbacks-repeats',
  async up({ qi, dialect, types }) {
    await qi.addColumn('postbacks', 'repeat_count', { type: types.INTEGER, allowNull: false, defaultValue: 1 });
    await qi.addColumn('postbacks', 'last_seen_at', timestamp(true));
    await qi.addColumn('postbacks', 'aggregate_key', binaryString(dialect, 64, true));
    await qi.addIndex('postbacks', ['aggregate_key'], { unique: true, name: 'postbacks_aggregate_key' });
  },
  async down({ qi }) {
    await qi.removeIndex('postbacks', 'postbacks_aggregate_key');
    await qi.removeColumn('postbacks', 'aggregate_key');
    await qi.removeColumn('postbacks', 'last_seen_at');
    await qi.removeColumn('postbacks', 'repeat_count');
  },
};
