import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** Conversions from the networks (or entered by hand); one per network transaction id. */
export const createOrders: Migration = {
  name: '20261122000010-create-orders',
  async up({ qi, dialect, types }) {
    const money = { type: types.BIGINT, allowNull: false, defaultValue: 0 };
    await qi.createTable(
      'orders',
      {
        id: primaryKey(dialect),
        network: binaryString(dialect, 64),
        transaction_id: binaryString(dialect, 191),
        merchant_ref: { type: types.STRING(191), allowNull: true },
        advertiser: binaryString(dialect, 128, true),
        member_id: { ...foreignKey(dialect, true), references: { model: 'users', key: 'id' }, onDelete: 'RESTRICT' },
        sub_id: { type: types.STRING(191), allowNull: true },
        sale_amount: money,
        commission: money,
        currency: { type: types.CHAR(3), allowNull: false },
        cashback: money,
        status: { type: types.STRING(16), allowNull: false },
        source: { type: types.STRING(16), allowNull: false },
        clicked_at: timestamp(true),
        event_at: timestamp(true),
        status_changed_at: timestamp(),
        raw: { type: types.TEXT, allowNull: true },
        note: { type: types.STRING(500), allowNull: true },
        created_at: timestamp(),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('orders', ['network', 'transaction_id'], { unique: true, name: 'orders_network_txn' });
    await qi.addIndex('orders', ['status', 'id'], { name: 'orders_status' });
    await qi.addIndex('orders', ['member_id', 'id'], { name: 'orders_member' });
    await qi.addIndex('orders', ['network', 'advertiser', 'id'], { name: 'orders_advertiser' });
    await qi.addIndex('orders', ['created_at'], { name: 'orders_created' });
    await qi.addIndex('orders', ['merchant_ref'], { name: 'orders_merchant_ref' });
  },
  async down({ qi }) {
    await qi.dropTable('orders');
  },
};
