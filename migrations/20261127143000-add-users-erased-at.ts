import { timestamp, type Migration } from '../src/db/migration.js';

/**
 * When a member was erased (their personal data anonymised at their request): set once, it makes a
 * second erase answer the first one's result and keeps the account from being enabled again.
 */
export const addUsersErasedAt: Migration = {
  name: '20261127143000-add-users-erased-at',
  async up({ qi }) {
    await qi.addColumn('users', 'erased_at', timestamp(true));
  },
  async down({ qi }) {
    await qi.removeColumn('users', 'erased_at');
  },
};
