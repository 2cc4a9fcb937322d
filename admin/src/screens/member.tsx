// A member's page (/admin/members/{id}[/orders|/payouts|/referrals]): balances per currency
// (GET /ledger/members?member_id=), then one tab at a time, each its own path so the query string
// belongs to its list: the ledger as a timeline (GET /ledger/entries, activity layout) with the
// reversal of an entry, the member's orders (GET /orders?member_id=), payouts
// (GET /payouts?member_id=) and referrals (GET /referrals). Credit or debit from the balances;
// export the member's data or erase the member (member-data.tsx).
import { Button, Card, CardBody, CardHeader, Spinner } from '@wordpress/components';
import type { Field } from '@wordpress/dataviews';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api } from '../lib/api';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import type { ScreenProps } from '../screens';
import { type Adjusted, AdjustModal, ENTRY_TYPES, type Entry, ReverseModal, typeLabel } from './member-actions';
import type { MemberBalance } from './members';
import { OrdersTab, PayoutsTab } from './member-lists';
import { ReferralsTab } from './member-referrals';
import { FileClaimModal } from './claim-file';
import { downloadMemberData, EraseModal } from './member-data';

const TABS = [
  { path: '', label: 'Ledger' },
  { path: 'orders', label: 'Orders' },
  { path: 'payouts', label: 'Payouts' },
  { path: 'referrals', label: 'Referrals' },
] as const;

export default function MemberScreen({ rest, query }: ScreenProps) {
  const id = Number(rest[0]);
  if (!Number.isInteger(id) || id < 1 || rest.length > 2 || !TABS.some((t) => t.path === (rest[1] ?? ''))) {
    return (
      <>
        <h1>Not found</h1>
        <p>
          There is no such member page. <Link to="/members">All members</Link>
        </p>
      </>
    );
  }
  return <MemberPage key={id} id={id} tab={rest[1] ?? ''} query={query} />;
}

function MemberPage({ id, tab, query }: { id: number; tab: string; query: URLSearchParams }) {
  const [balances, setBalances] = useState<MemberBalance[] | null>(null);
  // Who this is even without a balance row: the lookup by id (`Display Name (login, email)`); null: no such user.
  const [who, setWho] = useState<string | null | undefined>(undefined);
  const [notice, say] = useScreenNotice();
  const [adjusting, setAdjusting] = useState(false);
  const [claiming, setClaiming] = useState(false);
  const [reversing, setReversing] = useState<Entry | null>(null);
  const [erasing, setErasing] = useState(false);
  const [exporting, setExporting] = useState(false);
  // Bumped after a credit, debit or reversal: the balances and the ledger are read again.
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: tick is the reload.
  useEffect(() => {
    api<MemberBalance[]>('/ledger/members', { query: { member_id: id, orderby: 'name', order: 'asc', per_page: 100 } }).then(
      (rows) => {
        setBalances(rows);
        say.clearError();
      },
      (err: unknown) => say.error(err),
    );
  }, [id, tick, say]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: tick is the reload (an erasure renames the member).
  useEffect(() => {
    api<{ id: number; label: string }[]>('/lookup/users', { query: { include: id } }).then(
      (users) => setWho(users[0]?.label ?? null),
      (err: unknown) => say.error(err),
    );
  }, [id, tick, say]);
  const first = balances?.[0];
  const name = first ? first.display_name || first.login : (who ?? `Member #${id}`);
  // By content: a reload that finds the same currencies keeps the ledger's fields (and its buttons, which a modal returns focus to).
  const currencyList = (balances ?? []).map((b) => b.currency).join(',');
  const currencies = useMemo(() => (currencyList ? currencyList.split(',') : []), [currencyList]);
  const onReverse = useCallback(
    (entry: Entry) => {
      say.clear();
      setReversing(entry);
    },
    [say],
  );

  if (who === null)
    return (
      <>
        <p className="ct-breadcrumb">
          <Link to="/members">Members</Link>
        </p>
        <h1>Member not found</h1>
        <p>There is no user #{id}. Find the member by login, email or name on the members list.</p>
      </>
    );
  return (
    <>
      <p className="ct-breadcrumb">
        <Link to="/members">Members</Link>
      </p>
      <div className="ct-heading">
        <div>
          <h1>{name}</h1>
          {first ? (
            <p className="ct-muted ct-member-sub">
              {first.login} · {first.email} · member #{id}
            </p>
          ) : null}
        </div>
        <div className="ct-buttons">
          <Button
            __next40pxDefaultSize
            variant="secondary"
            isBusy={exporting}
            disabled={exporting}
            accessibleWhenDisabled
            onClick={() => {
              say.clear();
              setExporting(true);
              downloadMemberData(id)
                .then(
                  (file) => say.success(`Exported: ${file}.`),
                  (err: unknown) => say.error(err),
                )
                .finally(() => setExporting(false));
            }}
          >
            Export data
          </Button>
          <Button
            __next40pxDefaultSize
            variant="secondary"
            isDestructive
            onClick={() => {
              say.clear();
              setErasing(true);
            }}
          >
            Erase member
          </Button>
          <Button
            __next40pxDefaultSize
            variant="secondary"
            onClick={() => {
              say.clear();
              setClaiming(true);
            }}
          >
            File a claim
          </Button>
          <Button
            __next40pxDefaultSize
            variant="primary"
            onClick={() => {
              say.clear();
              setAdjusting(true);
            }}
          >
            Credit or debit
          </Button>
        </div>
      </div>
      <ScreenNotices notice={notice} onDismiss={say.clear} />
      <Card className="ct-balances">
        <CardHeader>
          <h2>Balances</h2>
        </CardHeader>
        <CardBody>{balances === null ? <Spinner /> : <BalancesTable balances={balances} />}</CardBody>
      </Card>
      <nav className="ct-tabs" aria-label="Member sections">
        {TABS.map((t) => (
          <Link key={t.path} to={`/members/${id}${t.path ? `/${t.path}` : ''}`} className={t.path === tab ? 'is-current' : undefined}>
            {t.label}
          </Link>
        ))}
      </nav>
      <section className="ct-tab-panel" aria-label={TABS.find((t) => t.path === tab)?.label}>
        {tab === '' ? <LedgerTab key={tick} id={id} query={query} currencies={currencies} onReverse={onReverse} /> : null}
        {tab === 'orders' ? <OrdersTab id={id} query={query} /> : null}
        {tab === 'payouts' ? <PayoutsTab id={id} query={query} /> : null}
        {tab === 'referrals' ? <ReferralsTab id={id} /> : null}
      </section>
      {claiming ? (
        <FileClaimModal
          memberId={String(id)}
          memberName={name}
          currency={first?.currency ?? ''}
          onClose={() => setClaiming(false)}
          onDone={(c) => {
            setClaiming(false);
            say.success(`${c.duplicate ? 'Already on file' : 'Filed'}: claim #${c.id} is ${c.status}${c.reason ? ` (${c.reason})` : ''}.`);
          }}
        />
      ) : null}
      {adjusting ? (
        <AdjustModal
          memberId={id}
          memberName={name}
          currency={first?.currency ?? ''}
          onClose={() => setAdjusting(false)}
          onDone={(result: Adjusted, type) => {
            setAdjusting(false);
            const amount = result.entry.amount.replace(/^-/, '');
            say.success(
              `${type === 'credit' ? 'Credited' : 'Debited'} ${amount} ${result.entry.currency}. Available now: ${result.balance.available} ${result.balance.currency}.`,
            );
            setTick((t) => t + 1);
          }}
        />
      ) : null}
      {erasing ? (
        <EraseModal
          memberId={id}
          memberName={name}
          onClose={() => setErasing(false)}
          onDone={(result) => {
            setErasing(false);
            const extra = [
              ...result.payouts_cancelled.map((p) => `payout #${p} cancelled`),
              ...result.written_off.map((e) => `${e.amount.replace(/^-/, '')} ${e.currency} written off`),
            ];
            say.success(`Member erased: now ${result.member.login}${extra.length ? ` (${extra.join(', ')})` : ''}.`);
            setTick((t) => t + 1);
          }}
        />
      ) : null}
      {reversing ? (
        <ReverseModal
          entry={reversing}
          onClose={() => setReversing(null)}
          onDone={({ reversal }) => {
            setReversing(null);
            say.success(`Entry #${reversing.id} reversed by entry #${reversal.id} (${reversal.amount} ${reversal.currency}).`);
            setTick((t) => t + 1);
          }}
        />
      ) : null}
    </>
  );
}

function BalancesTable({ balances }: { balances: MemberBalance[] }) {
  if (balances.length === 0) return <p>No balance yet: this member has no ledger entries and no pending cashback.</p>;
  return (
    <table className="ct-table">
      <thead>
        <tr>
          <th scope="col">Currency</th>
          <th scope="col" className="ct-num">
            Available
          </th>
          <th scope="col" className="ct-num">
            Pending
          </th>
          <th scope="col" className="ct-num">
            Earned
          </th>
          <th scope="col" className="ct-num">
            Paid out
          </th>
          <th scope="col">Last entry</th>
        </tr>
      </thead>
      <tbody>
        {balances.map((b) => (
          <tr key={b.currency}>
            <th scope="row">{b.currency}</th>
            <td className="ct-num">
              <Money amount={b.available} />
            </td>
            <td className="ct-num">
              <Money amount={b.pending} />
            </td>
            <td className="ct-num">
              <Money amount={b.lifetime_earned} />
            </td>
            <td className="ct-num">
              <Money amount={b.lifetime_paid} />
            </td>
            <td>{b.last_entry_at ? new Date(b.last_entry_at).toLocaleString() : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function sourceText(entry: Entry): string {
  if (entry.reverses_id) return `Reverses entry #${entry.reverses_id}`;
  if (entry.order_id) return `Order #${entry.order_id}`;
  if (entry.source.type === 'payout') return `Payout #${entry.source.id}`;
  if (entry.source.type === 'referral') return `Referral #${entry.source.id}`;
  return 'Adjustment';
}

function LedgerTab({ id, query, currencies, onReverse }: { id: number; query: URLSearchParams; currencies: string[]; onReverse: (entry: Entry) => void }) {
  const spec = useMemo<ListSpec<Entry>>(() => {
    const fields: Field<Entry>[] = [
      { id: 'id', label: 'Entry', type: 'integer', filterBy: false, render: ({ item }) => <>#{item.id}</> },
      {
        id: 'type',
        label: 'Type',
        elements: ENTRY_TYPES,
        filterBy: { operators: ['isAny', 'isNone'] },
        enableHiding: false,
        render: ({ item }) => (
          <span className="ct-entry-title">
            <strong>{typeLabel(item.type)}</strong> <Money amount={item.amount} currency={item.currency} />
            {item.reversed_by ? <span className="ct-badge">Reversed by #{item.reversed_by}</span> : null}
          </span>
        ),
      },
      { id: 'amount', label: 'Amount', filterBy: false, render: ({ item }) => <Money amount={item.amount} currency={item.currency} /> },
      {
        id: 'currency',
        label: 'Currency',
        enableSorting: false,
        elements: currencies.map((c) => ({ value: c, label: c })),
        filterBy: { operators: ['isAny', 'isNone'] },
      },
      { id: 'note', label: 'Note', enableSorting: false, filterBy: false, render: ({ item }) => <>{item.note ?? ''}</> },
      {
        id: 'balance_after',
        label: 'Balance after',
        enableSorting: false,
        filterBy: false,
        render: ({ item }) => (
          // One element: the activity layout lays out a field's value as flex items, which drops the space.
          <span>
            Balance after <Money amount={item.balance_after} currency={item.currency} />
          </span>
        ),
      },
      { id: 'source', label: 'Source', enableSorting: false, filterBy: false, getValue: ({ item }) => sourceText(item) },
      { id: 'actor', label: 'By', enableSorting: false, filterBy: false, render: ({ item }) => <>by {item.actor}</> },
      { id: 'created_at', label: 'Posted', type: 'datetime', filterBy: { operators: ['after', 'before'] } },
    ];
    return {
      screen: `/members/${id}`,
      columnsKey: '/members/ledger',
      path: '/ledger/entries',
      fields,
      columns: ['created_at', 'source', 'balance_after', 'actor'],
      sort: { field: 'id', direction: 'desc' },
      filters: [
        { field: 'type', kind: 'any' },
        { field: 'currency', kind: 'any' },
      ],
      dateField: 'created_at',
      fixed: { member_id: String(id) },
      activity: { titleField: 'type', descriptionField: 'note' },
      perPage: 20,
      actions: [
        {
          id: 'reverse',
          label: 'Reverse',
          isPrimary: true,
          // A reversal cannot be reversed and an entry only once; a payout's entry is the API's to refuse, in words.
          isEligible: (entry) => entry.type !== 'reversal' && !entry.reversed_by,
          callback: ([entry]) => onReverse(entry),
        },
      ],
    };
  }, [id, currencies, onReverse]);
  const list = useListData(spec, query);
  return <ListView spec={spec} query={query} list={list} />;
}
