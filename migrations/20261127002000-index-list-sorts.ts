import type { Migration } from '../src/db/migration.js';

/**
 * The sorts and filters the list routes offer (issue 18: orderby/order, status, after/before):
 * each sortable column of the large lists gets an index, so page 1 of a sort reads ten index
 * entries instead of sorting 100,000 rows. On both dialects an index also holds the primary key
 * (InnoDB appends it, SQLite's rowid ends every entry), so `ORDER BY col, id` walks it as it is.
 */
const INDEXES: [table: string, columns: string[], name: string][] = [
  ['orders', ['event_at'], 'orders_event'],
  ['orders', ['status_changed_at'], 'orders_status_changed'],
  ['orders', ['commission'], 'orders_commission'],
  ['orders', ['cashback'], 'orders_cashback'],
  ['orders', ['status', 'created_at'], 'orders_status_created'],
  ['orders', ['network', 'status'], 'orders_network_status'],
  ['payouts', ['created_at'], 'payouts_created'],
  ['payouts', ['amount'], 'payouts_amount'],
  ['payouts', ['status', 'created_at'], 'payouts_status_created'],
  ['postbacks', ['network', 'received_at'], 'postbacks_network_received'],
  ['webhook_deliveries', ['webhook_id', 'status'], 'webhook_deliveries_webhook_status'],
];

export const indexListSorts: Migration = {
  name: '20261127002000-index-list-sorts',
  async up({ qi }) {
    for (const [table, columns, name] of INDEXES) await qi.addIndex(table, columns, { name });
  },
  async down({ qi }) {
    for (const [table, , name] of [...INDEXES].reverse()) await qi.removeIndex(table, name);
  },
};
