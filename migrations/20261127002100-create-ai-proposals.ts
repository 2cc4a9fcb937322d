import { binaryString, foreignKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * The AI proposals a dry run made: what the provider answered (after the sanitisers and the
 * `cashtrack.ai.result` filter), its model and usage, and a fingerprint of the target's text it was
 * made from, so keeping it saves exactly that text without asking the provider again, and refuses
 * when the target was edited since. `kept_at` and `answer` make a second keep answer the first
 * one's result. Rows live until `expires_at` (pruned when a new proposal is stored). Written only
 * by the AI service (services/ai/proposals.ts).
 */
export const createAiProposals: Migration = {
  name: '20261127002100-create-ai-proposals',
  async up({ qi, dialect, types }) {
    const text = dialect === 'mysql' ? types.TEXT('medium') : types.TEXT;
    await qi.createTable(
      'ai_proposals',
      {
        /** 32 random hex characters: not guessable, not a count of the site's AI use. */
        id: { ...binaryString(dialect, 32), primaryKey: true },
        /** `shop` (an advertiser) or `coupon`. */
        kind: binaryString(dialect, 16),
        item_id: foreignKey(dialect),
        /** The proposal as JSON: {title, description} or {description, body}. */
        output: { type: text, allowNull: false },
        /** The generation as JSON: model, tokens, format, attempts, duration_ms, at. */
        generation: { type: types.TEXT, allowNull: false },
        /** sha256 of the target's text the proposal was made from. */
        base: binaryString(dialect, 64),
        /** The dry run's `ai_calls` row: it becomes the `saved` one when the proposal is kept (the tokens were spent once). */
        call_id: foreignKey(dialect, true),
        actor: { type: types.STRING(191), allowNull: false },
        created_at: timestamp(),
        expires_at: timestamp(),
        kept_at: timestamp(true),
        kept_by: { type: types.STRING(191), allowNull: true },
        /** What the keep answered (JSON), answered again to a repeated keep. */
        answer: { type: text, allowNull: true },
      },
      tableOptions(dialect),
    );
    await qi.addIndex('ai_proposals', ['expires_at'], { name: 'ai_proposals_expires' });
  },
  async down({ qi }) {
    await qi.dropTable('ai_proposals');
  },
};
