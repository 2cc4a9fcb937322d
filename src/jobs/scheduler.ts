// node-cron wired to the schedule service, in the daemon only: on start the missed runs are caught
// up, then each cron task fires its slots through `ScheduleService.fire`, which claims each slot
// once across daemons. node-cron hands every firing its slot (the due time computed from the
// expression), so a daemon whose clock runs a few seconds off still fires the same slot.
import cron, { type ScheduledTask, type TaskContext } from 'node-cron';
import type { LogService } from '../services/logs/index.js';
import type { CronTask, ScheduleService } from '../services/schedules/index.js';

/**
 * How late a firing may be and still run: node-cron drops a beat that comes later than this
 * (a busy event loop, a suspended machine) as missed; a missed beat is caught up instead.
 */
const MISSED_TOLERANCE_MS = 60_000;

/** Fires the schedules in this process. */
export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly deps: { schedules: ScheduleService; logger: LogService; missedToleranceMs?: number }) {}

  /** Catches up missed runs, then starts a node-cron task per schedule (and per network override). */
  async start(): Promise<void> {
    const { schedules, logger } = this.deps;
    try {
      for (const key of await schedules.unknownOverrides()) logger.warning('schedules', `${key} names no network: it is ignored`, { key });
    } catch (err) {
      logger.error('schedules', 'Could not check the networks named in schedule overrides', { error: (err as Error).message });
    }
    await this.track(this.catchUp());
    for (const task of schedules.cronTasks()) {
      const scheduled = cron.schedule(task.cron, (context: TaskContext) => this.track(this.fire(task, context.date)), {
        timezone: task.timezone,
        name: `${task.schedule}${task.network ? `:${task.network}` : ''}`,
        missedExecutionTolerance: this.deps.missedToleranceMs ?? MISSED_TOLERANCE_MS,
        // The missed beats are handled below; node-cron's own warning would go to the console.
        suppressMissedWarning: true,
      });
      // A beat missed here is caught up like a start after downtime: the latest slot, once.
      scheduled.on('execution:missed', () => void this.track(this.catchUp()));
      this.tasks.push(scheduled);
    }
  }

  private async fire(task: CronTask, slot: Date): Promise<void> {
    if (this.stopped) return;
    try {
      await this.deps.schedules.fire(task, slot);
    } catch (err) {
      // The claim rolled back with the failure: another daemon, or the next slot, gets its chance.
      this.deps.logger.error('schedules', `Scheduled ${task.schedule}${task.network ? ` (${task.network})` : ''} failed`, {
        schedule: task.schedule,
        network: task.network,
        slot: slot.toISOString(),
        error: (err as Error).message,
      });
    }
  }

  private async catchUp(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.deps.schedules.catchUp();
    } catch (err) {
      this.deps.logger.error('schedules', 'Catching up missed schedules failed', { error: (err as Error).message });
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }

  /** Stops firing and waits for the claims under way. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.tasks.splice(0)) await t.destroy();
    await Promise.allSettled([...this.inFlight]);
  }
}
