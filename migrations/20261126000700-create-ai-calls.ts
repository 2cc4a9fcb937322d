import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * One row per AI generation (a shop's content, a coupon's rewrite): the model, the tokens it spent
 * (over every attempt that got an answer), the job it ran in, how it ended and how long it took.
 * Written only by the AI service; read for an item's last generation, a job's cost and the overview.
 */
export const createAiCalls: Migration = {
  name: '20261126000700-create-ai-calls',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'ai_calls',
      {
        id: primaryKey(dialect),
        /** `shop` (an advertiser) or `coupon`. */
        kind: binaryString(dialect, 16),
        item_id: foreignKey(dialect),
        model: { type: types.STRING(191), allowNull: false },
        prompt_tokens: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        completion_tokens: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        total_tokens: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        job_id: foreignKey(dialect, true),
        /** `saved`, `dry_run` or `failed`. */
        outcome: binaryString(dialect, 16),
        /** The error code and reason of a failed generation. */
        error_code: binaryString(dialect, 64, true),
        reason: binaryString(dialect, 32, true),
        attempts: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        /** `json_schema` or `json_object`. */
        format: binaryString(dialect, 16),
        duration_ms: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        actor: { type: types.STRING(191), allowNull: false },
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('ai_calls', ['kind', 'item_id', 'outcome', 'id'], { name: 'ai_calls_item' });
    await qi.addIndex('ai_calls', ['job_id'], { name: 'ai_calls_job' });
    await qi.addIndex('ai_calls', ['created_at'], { name: 'ai_calls_created' });
  },
  async down({ qi }) {
    await qi.dropTable('ai_calls');
  },
};
