// Schedules: /schedules (every schedule with its expression, next due time and last run) and
// POST /schedules/{name}/run (run one now, through the same claim as a firing: 202 with the runs).
import { none } from '../../fields.js';
import { scheduleSchemas } from '../../services/schedules/schemas.js';
import { accepted, route, type RouteDef } from '../rest/types.js';

export const schedulesRoutes: RouteDef[] = [
  route({
    id: 'schedules.list',
    method: 'GET',
    path: '/schedules',
    auth: 'manage_options',
    description: 'Every schedule: its cron expression and time zone, whether it is on, the next due time and the last run with its job.',
    validate: { query: none() },
    handler: (_input, ctx) => ctx.schedules.list(),
  }),
  route({
    id: 'schedules.run',
    method: 'POST',
    path: '/schedules/{name}/run',
    auth: 'manage_options',
    description: 'Run a schedule now (202 with its runs: each queued a job, or was skipped because the previous one is still under way).',
    validate: { params: scheduleSchemas.name, payload: scheduleSchemas.run },
    handler: async ({ params, payload, actor }, ctx) => accepted(await ctx.schedules.run(params.name, payload, actor)),
  }),
];
