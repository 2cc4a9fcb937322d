// Persisted jobs: /jobs (list), /jobs/{id} (one; DELETE cancels). Routes that start jobs live with
// their noun (e.g. POST /advertisers/sync) and answer 202 with the job.
import { none } from '../../fields.js';
import { jobSchemas } from '../../services/jobs/schemas.js';
import { PagedResult, route, type RouteDef } from '../rest/types.js';

export const jobsRoutes: RouteDef[] = [
  route({
    id: 'jobs.list',
    method: 'GET',
    path: '/jobs',
    auth: 'manage_options',
    description: 'Jobs, newest first.',
    validate: { query: jobSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.jobs.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'jobs.counts',
    method: 'GET',
    path: '/jobs/counts',
    auth: 'manage_options',
    description: "Jobs per status under the list's other filters: {total, statuses} (the views row).",
    validate: { query: jobSchemas.counts },
    handler: ({ query }, ctx) => ctx.jobs.counts(query),
  }),
  route({
    id: 'jobs.get',
    method: 'GET',
    path: '/jobs/{id}',
    auth: 'manage_options',
    description: 'One job, with its progress, result or error.',
    validate: { params: jobSchemas.jobId, query: none() },
    handler: ({ params }, ctx) => ctx.jobs.get(params.id),
  }),
  route({
    id: 'jobs.cancel',
    method: 'DELETE',
    path: '/jobs/{id}',
    auth: 'manage_options',
    description: 'Cancel a job: a queued job at once, a running one at its next checkpoint (it is `cancelling` until then).',
    validate: { params: jobSchemas.jobId, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.jobs.cancel(params.id, actor),
  }),
];
