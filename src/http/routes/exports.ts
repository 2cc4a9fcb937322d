// Exports as files: POST /exports (202: the export, its `exports.run` job queued), the list, one
// export, its file (an authenticated download streamed from the data directory) and DELETE.
import { none } from '../../fields.js';
import { exportSchemas } from '../../services/exports/schemas.js';
import { accepted, PagedResult, RestResponse, route, type RouteDef } from '../rest/types.js';

export const exportsRoutes: RouteDef[] = [
  route({
    id: 'exports.list',
    method: 'GET',
    path: '/exports',
    auth: 'manage_options',
    description: 'Exports, newest first, filtered by status and kind.',
    validate: { query: exportSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.exports.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'exports.create',
    method: 'POST',
    path: '/exports',
    auth: 'manage_options',
    description:
      "Export the rows of a list (orders, ledger_entries, payouts, balances, clicks, claims) under that list route's filters as CSV or JSON Lines: 202 with the export; its exports.run job writes the file.",
    validate: { payload: exportSchemas.create },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.exports.create(payload, actor)),
  }),
  route({
    id: 'exports.get',
    method: 'GET',
    path: '/exports/{id}',
    auth: 'manage_options',
    description: 'One export: status, rows, bytes, the filters it was made with, when its file expires.',
    validate: { params: exportSchemas.exportId, query: none() },
    handler: ({ params }, ctx) => ctx.exports.get(params.id),
  }),
  route({
    id: 'exports.file',
    method: 'GET',
    path: '/exports/{id}/file',
    auth: 'manage_options',
    description:
      'The export file as an attachment (text/csv or application/jsonl); 409 svc_export_not_ready before it is written, 410 svc_export_expired or svc_export_file_missing after.',
    validate: { params: exportSchemas.exportId, query: none() },
    async handler({ params }, ctx) {
      const file = await ctx.exports.open(params.id);
      return new RestResponse(file.stream, 200, {
        'Content-Type': file.contentType,
        'Content-Length': String(file.size),
        'Content-Disposition': `attachment; filename="${file.export.file_name}"`,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      });
    },
  }),
  route({
    id: 'exports.delete',
    method: 'DELETE',
    path: '/exports/{id}',
    auth: 'manage_options',
    description: 'Delete an export and its file (a queued or running one is cancelled).',
    validate: { params: exportSchemas.exportId, query: none(), payload: none() },
    async handler({ params, actor }, ctx) {
      await ctx.exports.delete(params.id, actor);
      return { deleted: true, id: params.id };
    },
  }),
];
