import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * The AI token budget of each UTC day: `ai_token_days` holds the tokens counted per day (one row a
 * day, locked while a call reserves), `ai_token_reservations` the estimates of the calls in flight,
 * so concurrent calls and several daemons share one budget. A reservation outlives a crashed
 * process only until its `expires_at`. Written only by the AI service (services/ai/budget.ts).
 */
export const createAiTokenBudget: Migration = {
  name: '20261127001700-create-ai-token-budget',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'ai_token_days',
      {
        /** `YYYY-MM-DD`, UTC. */
        day: { ...binaryString(dialect, 10), primaryKey: true },
        spent: { type: types.BIGINT, allowNull: false, defaultValue: 0 },
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.createTable(
      'ai_token_reservations',
      {
        id: primaryKey(dialect),
        day: binaryString(dialect, 10),
        tokens: { type: types.BIGINT, allowNull: false },
        job_id: foreignKey(dialect, true),
        expires_at: timestamp(),
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('ai_token_reservations', ['day', 'expires_at'], { name: 'ai_token_reservations_day' });
    await qi.addIndex('ai_token_reservations', ['expires_at'], { name: 'ai_token_reservations_expires' });
  },
  async down({ qi }) {
    await qi.dropTable('ai_token_reservations');
    await qi.dropTable('ai_token_days');
  },
};
