import type { Migration } from '../src/db/migration.js';

/**
 * Private media: a claim's receipt image is stored through the media pipeline but never served on
 * the public /media/ path; administrators read it through GET /claims/{id}/receipt.
 */
export const addMediaPrivate: Migration = {
  name: '20261127110001-add-media-private',
  async up({ qi, types }) {
    await qi.addColumn('media', 'private', { type: types.BOOLEAN, allowNull: false, defaultValue: false });
  },
  async down({ qi }) {
    await qi.removeColumn('media', 'private');
  },
};
