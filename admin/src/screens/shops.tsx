// Shops: the advertiser catalog (GET /advertisers) with views by status, filters by network, page
// and logo, and the long work on it as jobs followed live: sync, bulk pages, bulk logos, bulk AI
// content. One shop's page is /admin/shops/{module}/{advertiser} (shop.tsx).
import { Button, Card, CardBody, CardHeader, Notice, SelectControl } from '@wordpress/components';
import type { Field } from '@wordpress/dataviews';
import { useEffect, useMemo, useState } from 'react';
import { api, errorMessage, isApiError } from '../lib/api';
import { type Job, JobProgress } from '../lib/job-progress';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import type { ScreenProps } from '../screens';
import type { Network } from './networks';
import { type Advertiser, commissionText, ShopScreen } from './shop';
import './networks.css';

const STATUSES = [
  { value: 'active', label: 'Active' },
  { value: 'inactive', label: 'Inactive' },
];
const YES_NO = [
  { value: '1', label: 'Yes' },
  { value: '0', label: 'No' },
];

export const shopPath = (a: { module: string; advertiser: string }) => `/shops/${encodeURIComponent(a.module)}/${encodeURIComponent(a.advertiser)}`;

function catalogSpec(networks: Network[]): ListSpec<Advertiser> {
  const fields: Field<Advertiser>[] = [
    {
      id: 'name',
      label: 'Shop',
      enableHiding: false,
      render: ({ item }) => (
        <Link to={shopPath(item)}>
          {item.logo ? <img className="ct-logo-small" src={item.logo} alt="" /> : null}
          {item.name}
        </Link>
      ),
    },
    {
      id: 'network',
      label: 'Network',
      enableSorting: false,
      getValue: ({ item }) => item.module,
      elements: networks.map((n) => ({ value: n.id, label: n.name })),
      filterBy: { operators: ['isAny'] },
    },
    { id: 'advertiser', label: 'Id at the network', enableSorting: false },
    { id: 'status', label: 'Status', elements: STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
    { id: 'commission', label: 'Commission', enableSorting: false, render: ({ item }) => <>{commissionText(item.commission)}</> },
    {
      id: 'has_page',
      label: 'Page',
      enableSorting: false,
      elements: YES_NO,
      getValue: ({ item }) => (item.page_id ? '1' : '0'),
      render: ({ item }) => <>{item.page_id ? 'yes' : 'no'}</>,
      filterBy: { operators: ['is'] },
    },
    {
      id: 'has_logo',
      label: 'Logo',
      enableSorting: false,
      elements: YES_NO,
      getValue: ({ item }) => (item.logo ? '1' : '0'),
      render: ({ item }) => <>{item.logo ? 'yes' : 'no'}</>,
      filterBy: { operators: ['is'] },
    },
    { id: 'domain', label: 'Domain', enableSorting: false },
    { id: 'updated_at', label: 'Updated', type: 'datetime' },
    { id: 'created_at', label: 'Added', type: 'datetime' },
  ];
  return {
    screen: '/shops',
    path: '/advertisers',
    fields,
    columns: ['name', 'network', 'status', 'commission', 'has_page', 'has_logo', 'updated_at'],
    sort: { field: 'name', direction: 'asc' },
    filters: [
      { field: 'status', kind: 'any' },
      { field: 'network', kind: 'any' },
      { field: 'has_page', kind: 'is' },
      { field: 'has_logo', kind: 'is' },
    ],
    search: true,
    views: { param: 'status', values: STATUSES, countsPath: '/advertisers/counts' },
  };
}

export default function ShopsScreen({ rest, query }: ScreenProps) {
  if (rest.length >= 2) return <ShopScreen module={rest[0]} advertiser={rest.slice(1).join('/')} />;
  return <Catalog query={query} />;
}

function Catalog({ query }: { query: URLSearchParams }) {
  const [networks, setNetworks] = useState<Network[]>([]);
  useEffect(() => {
    api<Network[]>('/networks', { query: { per_page: 100 } }).then(setNetworks, () => setNetworks([]));
  }, []);
  const spec = useMemo(() => catalogSpec(networks), [networks]);
  const list = useListData(spec, query);
  // A finished run changes the catalog: the rows and the views row's counts are read again, in
  // place (no remount: the user's focus and scroll stay where they were).
  return (
    <>
      <h1>Shops</h1>
      <BulkWork networks={networks} onFinished={list.reload} />
      <ListView spec={spec} query={query} list={list} />
    </>
  );
}

const JOB_LABELS: Record<string, string> = {
  'advertisers.sync': 'Sync',
  'pages.bulk': 'Bulk pages',
  'logos.bulk': 'Bulk logos',
  'ai.bulk': 'Bulk AI content',
};

interface Coverage {
  pages: { active: number; with_page: number } | null;
  logos: { total: number; with_logo: number } | null;
}

/** Sync and the bulk runs, each a job followed live with its progress and a cancel button. */
function BulkWork({ networks, onFinished }: { networks: Network[]; onFinished: () => void }) {
  const [network, setNetwork] = useState('');
  const [jobs, setJobs] = useState<Job[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [coverage, setCoverage] = useState<Coverage>({ pages: null, logos: null });
  const [tick, setTick] = useState(0);

  const follow = (job: Job) => setJobs((list) => [job, ...list.filter((j) => j.id !== job.id)]);
  // Runs under way when the screen opens (started by a schedule, the CLI or another tab) are followed too.
  useEffect(() => {
    api<Job[]>('/jobs', { query: { status: 'queued,running,cancelling', type: Object.keys(JOB_LABELS).join(','), per_page: 10 } }).then(
      (running) => setJobs((list) => [...list, ...running.filter((r) => !list.some((j) => j.id === r.id))]),
      () => {},
    );
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: read again after each run ends (tick).
  useEffect(() => {
    void Promise.all([
      api<{ advertisers: Coverage['pages'] }>('/advertisers/pages').then(
        (r) => r.advertisers,
        () => null,
      ),
      api<{ advertisers: Coverage['logos'] }>('/advertisers/logos').then(
        (r) => r.advertisers,
        () => null,
      ),
    ]).then(([pages, logos]) => setCoverage({ pages, logos }));
  }, [tick]);

  const start = (path: string, data: Record<string, unknown>) => {
    setError(null);
    setNotice(null);
    api<Job>(path, { method: 'POST', data }).then(follow, (err: unknown) => {
      const running = isApiError(err) && err.code === 'svc_job_already_running' ? (err.data?.job as Job | undefined) : undefined;
      if (running) {
        setNotice(`${errorMessage(err)} Following it below.`);
        follow(running);
      } else setError(errorMessage(err));
    });
  };
  const scope = network ? { network } : {};
  return (
    <Card className="ct-bulk">
      <CardHeader>
        <h2>Sync and bulk work</h2>
      </CardHeader>
      <CardBody>
        <div className="ct-form">
          <p className="ct-aside">
            {coverage.pages ? `${coverage.pages.with_page} of ${coverage.pages.active} active shops have a page. ` : ''}
            {coverage.logos ? `${coverage.logos.with_logo} of ${coverage.logos.total} have a logo.` : ''}
          </p>
          <div className="ct-buttons">
            <SelectControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label="Network"
              value={network}
              options={[{ value: '', label: 'Every network' }, ...networks.map((n) => ({ value: n.id, label: n.name }))]}
              onChange={setNetwork}
            />
            <Button __next40pxDefaultSize variant="primary" onClick={() => start('/advertisers/sync', scope)}>
              Sync advertisers
            </Button>
            <Button __next40pxDefaultSize variant="secondary" onClick={() => start('/advertisers/pages', scope)}>
              Make missing pages
            </Button>
            <Button __next40pxDefaultSize variant="secondary" onClick={() => start('/advertisers/logos', scope)}>
              Fetch missing logos
            </Button>
            <Button __next40pxDefaultSize variant="secondary" onClick={() => start('/ai/bulk', { kind: 'shops', filter: { ...scope, status: 'active' } })}>
              Write AI content
            </Button>
          </div>
          {error ? (
            <Notice status="error" isDismissible={false}>
              {error}
            </Notice>
          ) : null}
          {notice ? (
            <Notice status="info" isDismissible={false}>
              {notice}
            </Notice>
          ) : null}
          {jobs.length ? (
            <div className="ct-jobs">
              {jobs.map((job) => (
                <JobProgress
                  key={job.id}
                  job={job}
                  label={`${JOB_LABELS[job.type] ?? job.type} #${job.id}${typeof job.params.network === 'string' ? ` (${job.params.network})` : ''}`}
                  onFinished={() => {
                    setTick((t) => t + 1);
                    onFinished();
                  }}
                />
              ))}
            </div>
          ) : null}
        </div>
      </CardBody>
    </Card>
  );
}
