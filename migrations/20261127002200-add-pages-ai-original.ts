import type { Migration } from '../src/db/migration.js';

/**
 * `pages.ai_original`: the shop's text from before the first AI write (JSON {body, description}:
 * the page body and the advertiser's description), so `POST /pages/{id}/revert` restores both as
 * a coupon's revert does. Null when the AI has not written over the page since the last revert.
 */
export const addPagesAiOriginal: Migration = {
  name: '20261127002200-add-pages-ai-original',
  async up({ qi, dialect, types }) {
    await qi.addColumn('pages', 'ai_original', { type: dialect === 'mysql' ? types.TEXT('medium') : types.TEXT, allowNull: true });
  },
  async down({ qi }) {
    await qi.removeColumn('pages', 'ai_original');
  },
};
