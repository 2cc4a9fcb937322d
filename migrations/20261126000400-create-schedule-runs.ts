import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Runs of the schedules: one row per schedule, network ('' for a schedule that is not per network)
 * and slot (the due time computed from the cron expression). The unique key is the claim: every
 * daemon firing a slot inserts its row with INSERT IGNORE and only the one whose insert landed
 * enqueues the job, so a slot runs once across daemons. The row then records the job queued, or
 * why the run was skipped. Same columns on both dialects.
 */
export const createScheduleRuns: Migration = {
  name: '20261126000400-create-schedule-runs',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'schedule_runs',
      {
        id: primaryKey(dialect),
        schedule: binaryString(dialect, 64),
        network: { ...binaryString(dialect, 64), defaultValue: '' },
        slot: timestamp(),
        /** `cron` (fired on time), `catch_up` (missed while every daemon was down), `manual`. */
        trigger_kind: { type: types.STRING(16), allowNull: false },
        /** `queued` (job_id is the job) or `skipped` (reason says why; job_id is the job still running). */
        status: { type: types.STRING(16), allowNull: false },
        job_id: foreignKey(dialect, true),
        reason: { type: types.STRING(500), allowNull: true },
        /** The process whose claim won. */
        claimed_by: { type: types.STRING(128), allowNull: false },
        actor: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('schedule_runs', ['schedule', 'network', 'slot'], { unique: true, name: 'schedule_runs_slot' });
    await qi.addIndex('schedule_runs', ['created_at'], { name: 'schedule_runs_created' });
  },
  async down({ qi }) {
    await qi.dropTable('schedule_runs');
  },
};
