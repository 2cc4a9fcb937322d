import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * What each network has paid: an order records when and under which payment its network paid it
 * (and the amount paid, when the network says it), and `network_payments` keeps every payment line
 * a network reported, one per (network, payment, transaction), including lines for transactions we
 * do not know (order_id null): kept and listed, never dropped. Written by services/orders/.
 */
export const createNetworkPayments: Migration = {
  name: '20261127140000-create-network-payments',
  async up({ qi, dialect, types }) {
    await qi.addColumn('orders', 'network_paid_at', timestamp(true));
    await qi.addColumn('orders', 'network_payment_id', { type: types.STRING(191), allowNull: true });
    await qi.addColumn('orders', 'network_paid_amount', { type: types.BIGINT, allowNull: true });
    await qi.addIndex('orders', ['network', 'status', 'network_paid_at'], { name: 'orders_network_paid' });
    await qi.createTable(
      'network_payments',
      {
        id: primaryKey(dialect),
        network: binaryString(dialect, 64),
        payment_id: binaryString(dialect, 191),
        transaction_id: binaryString(dialect, 191),
        order_id: { ...foreignKey(dialect, true), references: { model: 'orders', key: 'id' }, onDelete: 'RESTRICT' },
        amount: { type: types.BIGINT, allowNull: true },
        currency: { type: types.CHAR(3), allowNull: true },
        paid_at: timestamp(),
        source: { type: types.STRING(16), allowNull: false },
        raw: { type: types.TEXT, allowNull: true },
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('network_payments', ['network', 'payment_id', 'transaction_id'], {
      unique: true,
      name: 'network_payments_line',
    });
    await qi.addIndex('network_payments', ['network', 'order_id'], { name: 'network_payments_order' });
  },
  async down({ qi }) {
    await qi.dropTable('network_payments');
    await qi.removeIndex('orders', 'orders_network_paid');
    await qi.removeColumn('orders', 'network_paid_amount');
    await qi.removeColumn('orders', 'network_payment_id');
    await qi.removeColumn('orders', 'network_paid_at');
  },
};
