import { binaryString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Persisted jobs: long work with progress, cancellation, a lease renewed by heartbeats (a job whose
 * process died is taken over once the lease expires) and a checkpoint to resume from.
 */
export const createJobs: Migration = {
  name: '20261124000001-create-jobs',
  async up({ qi, dialect, types }) {
    const longText = dialect === 'mysql' ? 'MEDIUMTEXT' : types.TEXT;
    await qi.createTable(
      'jobs',
      {
        id: primaryKey(dialect),
        type: { type: types.STRING(64), allowNull: false },
        params: { type: longText, allowNull: false },
        /** sha256 of type and canonical params: finds "the same job" for `unique` enqueues. */
        params_hash: binaryString(dialect, 64),
        /** params_hash while a job enqueued as unique is queued or running, else NULL (a unique index). */
        unique_key: binaryString(dialect, 64, true),
        status: { type: types.STRING(16), allowNull: false },
        progress_total: { type: types.BIGINT, allowNull: true },
        progress_done: { type: types.BIGINT, allowNull: false, defaultValue: 0 },
        progress_failed: { type: types.BIGINT, allowNull: false, defaultValue: 0 },
        result: { type: longText, allowNull: true },
        error: { type: types.TEXT, allowNull: true },
        checkpoint: { type: longText, allowNull: true },
        attempts: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        lease_owner: { type: types.STRING(128), allowNull: true },
        lease_expires_at: timestamp(true),
        heartbeat_at: timestamp(true),
        actor: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
        started_at: timestamp(true),
        finished_at: timestamp(true),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    // Claiming walks (status, id) oldest first; lists filter by status or type, newest first.
    await qi.addIndex('jobs', ['status', 'id'], { name: 'jobs_status' });
    await qi.addIndex('jobs', ['type', 'id'], { name: 'jobs_type' });
    await qi.addIndex('jobs', ['params_hash'], { name: 'jobs_params_hash' });
    await qi.addIndex('jobs', ['unique_key'], { unique: true, name: 'jobs_unique_key' });
  },
  async down({ qi }) {
    await qi.dropTable('jobs');
  },
};
