// What the daemon counts for Prometheus (`GET /metrics`). Services report through the small
// `Metrics` interface on the context, never through prom-client itself, and with metrics off the
// context holds `noMetrics`, so an observation costs a call that does nothing. Each enabled
// instance has its own registry (not prom-client's global one): several servers in one process,
// tests among them, never register a metric twice. Labels are bounded: route ids (never raw
// paths), network ids, job types, event names and fixed outcome words.
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';
import type { PoolStats } from './db/direct.js';

// prom-client is loaded when metrics are switched on: a command, or a daemon without metrics,
// never pays for it.
const require = createRequire(import.meta.url);
const prom = () => require('prom-client') as typeof Prom;
/** Prometheus's text format, as prom-client names it. */
const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** What services and the HTTP layer report; every method is cheap and never throws. */
export interface Metrics {
  readonly enabled: boolean;
  /** One answered request: the route's id (or path template), method, status, seconds taken. */
  request(route: string, method: string, status: number, seconds: number): void;
  /** One stored postback record: `accepted`, `duplicate`, `rejected`, `error`. */
  postback(network: string, outcome: string): void;
  /** One job run that ended here: `done`, `failed`, `cancelled`, `released`, `lost`. */
  jobRun(type: string, outcome: string, seconds: number): void;
  /** One webhook delivery attempt: `delivered`, `failed`, `dead`, `blocked`... */
  webhookDelivery(event: string, outcome: string, seconds?: number): void;
  /** The exposition in Prometheus's text format. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** Metrics switched off. */
export const noMetrics: Metrics = {
  enabled: false,
  request() {},
  postback() {},
  jobRun() {},
  webhookDelivery() {},
  async render() {
    return { contentType: PROMETHEUS_CONTENT_TYPE, body: '' };
  },
};

export interface MetricsSources {
  /** The database's statement connections, read when scraped. */
  pool(): PoolStats;
  /** Each network the intake watchdog checked and whether it is stalled, read from the database when scraped. */
  networkStates?(): Promise<{ network: string; stalled: boolean }[]>;
}

/** Seconds buckets from 1 ms to 10 s: REST reads are milliseconds, a slow report a few seconds. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Jobs run from a second (a small sync) to hours (a bulk run over every shop). */
const JOB_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600];

/** Label values seen so far, up to `max`; any later new value reads `other`. */
class BoundedLabel {
  private readonly seen = new Set<string>();
  constructor(private readonly max: number) {}

  take(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(value);
    return value;
  }
}

/** prom-client over a registry of its own; the process and event-loop-lag defaults included. */
export class PromMetrics implements Metrics {
  readonly enabled = true;
  readonly registry: Prom.Registry;
  private readonly requests: Prom.Counter<'route' | 'method' | 'status'>;
  private readonly latency: Prom.Histogram<'route' | 'method' | 'status'>;
  private readonly postbacks: Prom.Counter<'network' | 'outcome'>;
  private readonly jobs: Prom.Counter<'type' | 'outcome'>;
  private readonly jobSeconds: Prom.Histogram<'type' | 'outcome'>;
  private readonly deliveries: Prom.Counter<'event' | 'outcome'>;
  private readonly deliverySeconds: Prom.Histogram<'event' | 'outcome'>;
  private readonly networks = new BoundedLabel(200);

  constructor(sources: MetricsSources) {
    const client = prom();
    this.registry = new client.Registry();
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, prefix: 'cashtrack_', eventLoopMonitoringPrecision: 20 });
    this.requests = new client.Counter({
      name: 'cashtrack_http_requests_total',
      help: 'HTTP requests answered, by route id, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.latency = new client.Histogram({
      name: 'cashtrack_http_request_duration_seconds',
      help: 'Time from receiving a request to answering it.',
      labelNames: ['route', 'method', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.postbacks = new client.Counter({
      name: 'cashtrack_postbacks_total',
      help: 'Postbacks stored, by network and outcome.',
      labelNames: ['network', 'outcome'],
      registers,
    });
    this.jobs = new client.Counter({
      name: 'cashtrack_job_runs_total',
      help: 'Job runs ended in this process, by type and outcome.',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.jobSeconds = new client.Histogram({
      name: 'cashtrack_job_run_duration_seconds',
      help: 'Duration of job runs in this process.',
      labelNames: ['type', 'outcome'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.deliveries = new client.Counter({
      name: 'cashtrack_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by event and outcome.',
      labelNames: ['event', 'outcome'],
      registers,
    });
    this.deliverySeconds = new client.Histogram({
      name: 'cashtrack_webhook_delivery_duration_seconds',
      help: 'Duration of webhook delivery attempts.',
      labelNames: ['event', 'outcome'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    const pool = (name: string, help: string, pick: (s: PoolStats) => number) =>
      new client.Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(pick(sources.pool()));
        },
      });
    // Read from the database at each scrape: every daemon shows the state the watchdog job (run
    // on whichever daemon claimed it) stored, not a value of its own.
    const networkStates = sources.networkStates;
    if (networkStates) {
      new client.Gauge({
        name: 'cashtrack_network_stalled',
        help: 'Whether the intake watchdog finds a network stalled (1) or not (0).',
        labelNames: ['network'],
        registers,
        async collect() {
          this.reset();
          for (const s of await networkStates()) this.set({ network: s.network }, s.stalled ? 1 : 0);
        },
      });
    }
    pool('cashtrack_db_pool_max', 'Most statement connections the pool opens.', (s) => s.max);
    pool('cashtrack_db_pool_open', 'Statement connections open.', (s) => s.open);
    pool('cashtrack_db_pool_busy', 'Statement connections in use.', (s) => s.busy);
    pool('cashtrack_db_pool_waiting', 'Statements waiting for a connection.', (s) => s.waiting);
  }

  request(route: string, method: string, status: number, seconds: number): void {
    const labels = { route, method: method.toUpperCase(), status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  postback(network: string, outcome: string): void {
    // Anyone can post to /postback/{anything}: past a few hundred names, the rest count as one.
    this.postbacks.inc({ network: this.networks.take(network), outcome });
  }

  jobRun(type: string, outcome: string, seconds: number): void {
    this.jobs.inc({ type, outcome });
    this.jobSeconds.observe({ type, outcome }, seconds);
  }

  webhookDelivery(event: string, outcome: string, seconds?: number): void {
    this.deliveries.inc({ event, outcome });
    if (seconds !== undefined) this.deliverySeconds.observe({ event, outcome }, seconds);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
