// Schedules: when the periodic jobs run, and each run claimed once across every daemon on the
// database. A run is claimed for its slot (schedule, network, due time computed from the cron
// expression, never from the firing daemon's clock) by inserting its `schedule_runs` row with
// INSERT IGNORE on the unique key: the daemon whose insert landed enqueues the job in the same
// transaction and records it; the others insert nothing and do nothing. Three daemons firing the
// same minute, or one whose clock is a few seconds off, therefore start one job. A run whose
// previous job (same job type and parameters) is still queued or running is skipped, and the row
// says why. node-cron fires the slots in the daemon (src/jobs/scheduler.ts); this service is what
// the firing, the catch-up at start, `cashtrack schedules ...` and GET /schedules call.
import type { Clock } from '../../clock.js';
import type { ScheduleConfig, ScheduleName } from '../../config/index.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { isServiceError, ServiceError } from '../../errors.js';
import { CronError, CronSlots } from '../../cron-slots.js';
import type { Job, JobService } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import type { Network } from '../networks/index.js';
import type { ScheduleDefinition } from './definitions.js';
import { RUN_COLUMNS, shapeRun, type CronTask, type RunTrigger, type ScheduleRun, type ScheduleTarget, type ScheduleView } from './rows.js';

// The shapes are part of this service's API.
export * from './rows.js';
export type { ScheduleDefinition } from './definitions.js';

interface Entry {
  def: ScheduleDefinition;
  config: ScheduleConfig;
  slots: CronSlots;
  overrides: Map<string, { slots: CronSlots | null; enabled: boolean | undefined }>;
}

interface Target {
  network: string | null;
  slots: CronSlots;
  enabled: boolean;
  /** Whether the network has an expression of its own. */
  own: boolean;
}

export interface ScheduleServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  jobs: JobService;
  /** Every network with its state (the targets of per-network schedules). */
  networks: { list(): Promise<Network[]> };
  config: Record<ScheduleName, ScheduleConfig>;
  definitions: readonly ScheduleDefinition[];
  /** Who claims (host:pid:random): recorded on the runs this process claims. */
  owner: string;
}

/** Lists the schedules, claims their runs once per slot across daemons and enqueues their jobs. */
export class ScheduleService {
  private readonly entries: Entry[];

  /** Throws svc_invalid_config naming the key of a bad expression or time zone. */
  constructor(private readonly deps: ScheduleServiceDeps) {
    this.entries = deps.definitions.map((def) => {
      const config = deps.config[def.name];
      const slots = checked(`schedules.${def.name}`, () => new CronSlots(config.cron, config.timezone));
      const overrides = new Map<string, { slots: CronSlots | null; enabled: boolean | undefined }>();
      for (const [network, o] of Object.entries(config.networks ?? {})) {
        overrides.set(network, {
          slots: o.cron ? checked(`schedules.${def.name}.networks.${network}`, () => new CronSlots(o.cron!, config.timezone)) : null,
          enabled: o.enabled,
        });
      }
      return { def, config, slots, overrides };
    });
  }

  /** Whether this build has the schedule's job type (looked up in the job registry). */
  private available(entry: Entry): boolean {
    return this.deps.jobs.registry.get(entry.def.job) !== undefined;
  }

  private entry(name: string): Entry {
    const entry = this.entries.find((e) => e.def.name === name);
    if (!entry) {
      throw new ServiceError(
        'svc_unknown_schedule',
        `There is no schedule "${String(name).slice(0, 64)}" (schedules: ${this.entries.map((e) => e.def.name).join(', ')}).`,
        404,
        { schedules: this.entries.map((e) => e.def.name) },
      );
    }
    return entry;
  }

  /** The networks a per-network schedule runs for: enabled, configured, and with what its job needs. */
  private async targets(entry: Entry): Promise<Target[]> {
    const own = { slots: entry.slots, enabled: entry.config.enabled };
    if (!entry.def.perNetwork) return [{ network: null, ...own, own: false }];
    const networks = (await this.deps.networks.list()).filter((n) => n.enabled && n.configured && entry.def.perNetwork!(n));
    return networks.map((n) => {
      const o = entry.overrides.get(n.id);
      return { network: n.id, slots: o?.slots ?? entry.slots, enabled: o?.enabled ?? entry.config.enabled, own: !!o?.slots };
    });
  }

  /**
   * The cron tasks the daemon wires: one per schedule available in this build, plus one per
   * network with an expression of its own. Disabled ones are left out where the configuration
   * alone tells (networks come and go while the daemon runs: their switches are read at firing).
   */
  cronTasks(): CronTask[] {
    const tasks: CronTask[] = [];
    for (const e of this.entries) {
      if (!this.available(e)) continue;
      const anyOn = e.config.enabled || [...e.overrides.values()].some((o) => o.enabled === true && !o.slots);
      if (anyOn) tasks.push({ schedule: e.def.name, network: null, cron: e.config.cron, timezone: e.config.timezone });
      if (!e.def.perNetwork) continue;
      for (const [network, o] of e.overrides) {
        if (o.slots && (o.enabled ?? e.config.enabled)) tasks.push({ schedule: e.def.name, network, cron: o.slots.expression, timezone: e.config.timezone });
      }
    }
    return tasks;
  }

  /** Networks named in per-network overrides that are not among the networks (a typo, or a network since removed). */
  async unknownOverrides(): Promise<string[]> {
    const known = new Set((await this.deps.networks.list()).map((n) => n.id));
    return this.entries.flatMap((e) => [...e.overrides.keys()].filter((id) => !known.has(id)).map((id) => `schedules.${e.def.name}.networks.${id}`));
  }

  /** Every schedule with its expression, next due time and last run. */
  async list(): Promise<ScheduleView[]> {
    const now = this.deps.clock.now();
    const out: ScheduleView[] = [];
    for (const e of this.entries) {
      const available = this.available(e);
      const last = await this.lastRun(e.def.name, e.def.perNetwork ? undefined : '');
      let networks: ScheduleTarget[] | null = null;
      let next: Date | null = null;
      if (e.def.perNetwork) {
        networks = [];
        for (const t of await this.targets(e)) {
          const due = available && t.enabled ? t.slots.next(now) : null;
          if (due && (!next || due < next)) next = due;
          networks.push({
            network: t.network!,
            cron: t.slots.expression,
            timezone: t.slots.timezone,
            enabled: t.enabled,
            next_due: due?.toISOString() ?? null,
            last_run: await this.lastRun(e.def.name, t.network!),
          });
        }
      } else if (available && e.config.enabled) {
        next = e.slots.next(now);
      }
      out.push({
        name: e.def.name,
        job_type: e.def.job,
        description: e.def.description,
        available,
        cron: e.config.cron,
        timezone: e.config.timezone,
        enabled: e.config.enabled,
        catch_up: e.config.catch_up,
        per_network: !!e.def.perNetwork,
        next_due: next?.toISOString() ?? null,
        last_run: last,
        networks,
      });
    }
    return out;
  }

  /** The run with the latest slot of a schedule, for one network ('' for none) or for any. */
  private async lastRun(schedule: string, network?: string): Promise<ScheduleRun | null> {
    const params: unknown[] = [schedule];
    let where = 'r.schedule = ?';
    if (network !== undefined) (where += ' AND r.network = ?'), params.push(network);
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${RUN_COLUMNS} FROM schedule_runs r LEFT JOIN jobs j ON j.id = r.job_id WHERE ${where} ORDER BY r.slot DESC, r.id DESC LIMIT 1`,
      params,
    );
    return row ? shapeRun(row) : null;
  }

  /** Runs of a schedule, newest slot first (tests and the CLI). */
  async runs(schedule: string, limit = 50): Promise<ScheduleRun[]> {
    this.entry(schedule);
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${RUN_COLUMNS} FROM schedule_runs r LEFT JOIN jobs j ON j.id = r.job_id WHERE r.schedule = ? ORDER BY r.slot DESC, r.id DESC LIMIT ${Math.max(1, Math.min(1000, Math.floor(limit)))}`,
      [schedule],
    );
    return rows.map(shapeRun);
  }

  /**
   * node-cron fired `task` for `slot`: claims the slot for each enabled network of the task (or
   * for the schedule) and enqueues the jobs of the claims this process won. Answers those runs.
   */
  async fire(task: Pick<CronTask, 'schedule' | 'network'>, slot: Date, trigger: Exclude<RunTrigger, 'manual'> = 'cron'): Promise<ScheduleRun[]> {
    const entry = this.entry(task.schedule);
    if (!this.available(entry)) return [];
    const targets = (await this.targets(entry)).filter(
      (t) => t.enabled && (task.network === null ? !t.own : t.network === task.network) && t.slots.matches(slot.getTime()),
    );
    const runs: ScheduleRun[] = [];
    for (const t of targets) {
      const run = await this.claim(entry, t.network, slot, trigger, `schedule:${entry.def.name}`);
      if (run) runs.push(run);
    }
    return runs;
  }

  /**
   * On start: for each enabled schedule (and network) with catch-up, the latest slot before now,
   * when it has no run and is newer than the last run, is claimed and run once. A schedule that
   * never ran counts as having missed it. Never one run per missed slot.
   */
  async catchUp(now?: Date): Promise<ScheduleRun[]> {
    const runs: ScheduleRun[] = [];
    for (const entry of this.entries) {
      if (!entry.config.catch_up || !this.available(entry)) continue;
      for (const t of await this.targets(entry)) {
        if (!t.enabled) continue;
        const last = await this.lastRun(entry.def.name, t.network ?? '');
        const missed = t.slots.previous(now ?? this.deps.clock.now(), last ? new Date(last.slot) : null);
        if (!missed) continue;
        const run = await this.claim(entry, t.network, missed, 'catch_up', `schedule:${entry.def.name}`);
        if (run) runs.push(run);
      }
    }
    return runs;
  }

  /**
   * Runs a schedule now (`cashtrack schedules run`, POST /schedules/{name}/run), whether or not
   * it is enabled: for one network, or for each of its networks. Through the same claim as a
   * firing (its slot is now), so a run still under way is skipped the same way.
   */
  async run(name: string, input: { network?: string }, actor: string): Promise<ScheduleRun[]> {
    const entry = this.entry(name);
    if (!this.available(entry)) {
      throw new ServiceError('svc_schedule_unavailable', `The schedule ${entry.def.name} runs ${entry.def.job} jobs, which this version does not have.`, 409, {
        job_type: entry.def.job,
      });
    }
    let networks: (string | null)[];
    if (!entry.def.perNetwork) {
      if (input.network !== undefined)
        throw new ServiceError('svc_schedule_not_per_network', `The schedule ${entry.def.name} does not run per network: leave out the network.`, 400, {
          schedule: entry.def.name,
        });
      networks = [null];
    } else if (input.network !== undefined) {
      networks = [await this.checkTarget(entry, input.network)];
    } else {
      networks = (await this.targets(entry)).map((t) => t.network);
    }
    const now = this.deps.clock.now().getTime();
    const runs: ScheduleRun[] = [];
    for (const network of networks) {
      // A manual run's slot is the moment it was asked for; another asked in the same millisecond
      // holds that slot, so this one takes the next free millisecond rather than vanishing.
      let run: ScheduleRun | null = null;
      for (let ms = 0; !run && ms < 100; ms++) run = await this.claim(entry, network, new Date(now + ms), 'manual', actor.slice(0, 64));
      if (run) runs.push(run);
    }
    return runs;
  }

  /** The network, when the schedule can run for it; else why not. */
  private async checkTarget(entry: Entry, id: string): Promise<string> {
    const network = (await this.deps.networks.list()).find((n) => n.id === id);
    if (!network) throw new ServiceError('svc_network_not_found', `Network ${id.slice(0, 64)} not found.`, 404, { network: id.slice(0, 64) });
    const reason = !network.enabled ? 'disabled' : !network.configured ? 'not_configured' : !entry.def.perNetwork!(network) ? 'unsupported' : null;
    if (reason) {
      const why = { disabled: 'is disabled', not_configured: 'is not configured', unsupported: `has no feed for ${entry.def.job}` }[reason];
      throw new ServiceError('svc_schedule_network_unavailable', `The schedule ${entry.def.name} cannot run for ${network.name}: the network ${why}.`, 409, {
        network: network.id,
        reason,
      });
    }
    return network.id;
  }

  /**
   * Claims (schedule, network, slot) and, when this insert won, enqueues the job in the same
   * transaction: a claim and its job commit together, so a process that dies in between leaves
   * neither and the slot can still be claimed. Null when another claim (another daemon) had it.
   */
  private async claim(entry: Entry, network: string | null, slot: Date, trigger: RunTrigger, actor: string): Promise<ScheduleRun | null> {
    const { db, clock, jobs, logger, owner } = this.deps;
    const name = entry.def.name;
    const params = network ? { network } : {};
    const label = `Scheduled ${name}${network ? ` (${network})` : ''}`;
    const outcome = await db
      .transaction(async (t: Transaction): Promise<{ id: number; job: Job | null; skippedFor: Job | null } | null> => {
        const now = clock.now();
        const { affected, insertId } = await db.execute(
          db.insertIgnore('schedule_runs', ['schedule', 'network', 'slot', 'trigger_kind', 'status', 'claimed_by', 'actor', 'created_at']),
          [name, network ?? '', slot, trigger, 'queued', owner.slice(0, 128), actor, now],
          t,
        );
        if (affected !== 1) return null;
        const id = insertId!;
        // A catch-up is for the latest slot only: when a newer one was claimed meanwhile (the daemons
        // that were up fired it), this claim is withdrawn. A locking read sees the latest commit.
        if (trigger === 'catch_up') {
          const newer = await db.select(
            `SELECT id FROM schedule_runs WHERE schedule = ? AND network = ? AND slot > ? LIMIT 1${db.forUpdate()}`,
            [name, network ?? '', slot],
            t,
          );
          if (newer.length) throw new Superseded();
        }
        try {
          const job = await jobs.enqueue(entry.def.job, params, actor, { unique: true, transaction: t });
          await db.execute('UPDATE schedule_runs SET job_id = ? WHERE id = ?', [job.id, id], t);
          return { id, job, skippedFor: null };
        } catch (err) {
          if (!isServiceError(err) || err.code !== 'svc_job_already_running') throw err;
          const running = err.data.job as Job;
          const reason = `job ${running.id} (${running.type}) is still ${running.status}`;
          await db.execute("UPDATE schedule_runs SET status = 'skipped', job_id = ?, reason = ? WHERE id = ?", [running.id, reason, id], t);
          return { id, job: null, skippedFor: running };
        }
      })
      .catch((err: unknown) => {
        if (err instanceof Superseded) return null;
        throw err;
      });
    const context = { schedule: name, network, slot: slot.toISOString(), trigger };
    if (!outcome) {
      logger.debug('schedules', `${label} for ${slot.toISOString()} was claimed by another process, or a newer run overtook it`, context);
      return null;
    }
    if (outcome.job) logger.info('schedules', `${label} queued job ${outcome.job.id}`, { ...context, job_id: outcome.job.id });
    else
      logger.warning('schedules', `${label} skipped: job ${outcome.skippedFor!.id} is still ${outcome.skippedFor!.status}`, {
        ...context,
        job_id: outcome.skippedFor!.id,
        reason: 'overlap',
      });
    const [row] = await db.select<Record<string, unknown>>(`SELECT ${RUN_COLUMNS} FROM schedule_runs r LEFT JOIN jobs j ON j.id = r.job_id WHERE r.id = ?`, [
      outcome.id,
    ]);
    return shapeRun(row);
  }

  /**
   * Deletes runs created more than `retentionDays` ago, but never the latest run of a schedule and
   * network (catch-up compares against it). Returns how many.
   */
  async prune(retentionDays: number): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - retentionDays * 86_400_000);
    // The derived table is materialised first: MariaDB refuses a subquery on the table it deletes from otherwise.
    const { affected } = await this.deps.db.execute(
      `DELETE FROM schedule_runs WHERE created_at < ? AND id NOT IN (
         SELECT id FROM (SELECT r.id FROM schedule_runs r JOIN (SELECT schedule, network, MAX(slot) AS slot FROM schedule_runs GROUP BY schedule, network) m
           ON m.schedule = r.schedule AND m.network = r.network AND m.slot = r.slot) keep)`,
      [cutoff],
    );
    return affected;
  }
}

/** A catch-up claim that a newer run overtook: its transaction rolls back. */
class Superseded extends Error {}

function checked(key: string, make: () => CronSlots): CronSlots {
  try {
    return make();
  } catch (err) {
    if (!(err instanceof CronError)) throw err;
    throw new ServiceError('svc_invalid_config', `Invalid configuration ${key}: ${err.message}`, 500, { key });
  }
}
