import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Missing-cashback claims: a member's "I bought and it did not track" (member, shop, the shop's
 * order reference, purchase date, amount), matched against orders we hold or filed with the
 * network and followed to its answer. One claim per member, network, advertiser and order
 * reference (the unique key keeps a retried create from making two). `click_id` is the click the
 * claim names (a nullable string: the clicks table is another domain's, no foreign key);
 * `receipt` names a private media file; `order_id` the order the claim ended on.
 */
export const createClaims: Migration = {
  name: '20261127110000-create-claims',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'claims',
      {
        id: primaryKey(dialect),
        member_id: { ...foreignKey(dialect), references: { model: 'users', key: 'id' }, onDelete: 'RESTRICT' },
        network: binaryString(dialect, 64),
        advertiser: binaryString(dialect, 128),
        order_ref: { type: types.STRING(191), allowNull: false },
        purchased_at: timestamp(),
        amount: { type: types.BIGINT, allowNull: false },
        currency: { type: types.CHAR(3), allowNull: false },
        note: { type: types.STRING(1000), allowNull: true },
        receipt: { type: types.STRING(80), allowNull: true },
        click_id: { type: types.STRING(64), allowNull: true },
        status: { type: types.STRING(16), allowNull: false },
        /** Why the claim is open, the network's (or support's) reason for a decline, or the answer given. */
        reason: { type: types.STRING(500), allowNull: true },
        order_id: { ...foreignKey(dialect, true), references: { model: 'orders', key: 'id' }, onDelete: 'RESTRICT' },
        /** How it was filed: `api` or `file` (a batch upload file), null while not filed. */
        channel: { type: types.STRING(8), allowNull: true },
        network_ref: { type: types.STRING(191), allowNull: true },
        network_status: { type: types.STRING(64), allowNull: true },
        /** The export file an Awin claim went out in. */
        export_file: { type: types.STRING(191), allowNull: true },
        deadline_at: timestamp(true),
        warned_at: timestamp(true),
        submitted_at: timestamp(true),
        resolved_at: timestamp(true),
        checked_at: timestamp(true),
        actor: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('claims', ['member_id', 'network', 'advertiser', 'order_ref'], { unique: true, name: 'claims_member_order' });
    await qi.addIndex('claims', ['network', 'advertiser', 'order_ref'], { name: 'claims_order_ref' });
    await qi.addIndex('claims', ['status', 'id'], { name: 'claims_status' });
    await qi.addIndex('claims', ['status', 'deadline_at'], { name: 'claims_deadline' });
    await qi.addIndex('claims', ['network', 'status', 'id'], { name: 'claims_network_status' });
    await qi.addIndex('claims', ['order_id'], { name: 'claims_order' });
  },
  async down({ qi }) {
    await qi.dropTable('claims');
  },
};
