// Declarative schedules: `{ name, schedule, run(ctx) }`, validated at boot; node-cron is wired only
// in the daemon (src/cli/commands/serve.ts). Each run is idempotent, so several daemons may run it.
import type { Context } from '../context.js';

export interface Schedule {
  name: string;
  /** Cron expression (node-cron syntax, UTC). */
  schedule: string;
  run(ctx: Context): Promise<Record<string, unknown>>;
}

export const schedules: Schedule[] = [
  {
    name: 'logs.prune',
    schedule: '17 3 * * *',
    async run(ctx) {
      return { deleted: await ctx.logger.prune() };
    },
  },
  {
    name: 'sessions.prune',
    schedule: '23 3 * * *',
    async run(ctx) {
      return { deleted: await ctx.sessions.prune() };
    },
  },
];
