import { binaryString, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * The intake watchdog's state per network (services/watchdog/): the learned baseline (expected
 * intake per hour of the week, recomputed at most hourly), the state `ok | stalled | unknown`, why,
 * and the current outage's alarm, so one outage raises one `network.stalled` and one
 * `network.recovered` however many times the check runs.
 */
export const createNetworkWatchdog: Migration = {
  name: '20261127145000-create-network-watchdog',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'network_watchdog',
      {
        network: { ...binaryString(dialect, 64), primaryKey: true },
        state: { type: types.STRING(16), allowNull: false },
        /** JSON: the reasons of the current state (empty unless stalled). */
        reasons: { type: types.TEXT, allowNull: true },
        stalled_since: timestamp(true),
        last_alarm_at: timestamp(true),
        /** JSON: the reasons the last alarm gave. */
        last_alarm: { type: types.TEXT, allowNull: true },
        recovered_at: timestamp(true),
        checked_at: timestamp(true),
        /** JSON: the baseline (168 expected counts per hour of the week, history span, events). */
        baseline: { type: types.TEXT, allowNull: true },
        baseline_at: timestamp(true),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('network_watchdog', ['state'], { name: 'network_watchdog_state' });
  },
  async down({ qi }) {
    await qi.dropTable('network_watchdog');
  },
};
