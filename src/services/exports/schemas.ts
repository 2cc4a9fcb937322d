// Input schemas of the export routes, shared with `cashtrack export`.
import Joi from 'joi';
import { anyOf, id, paging, sorting, type ListQuery, lazySchemas } from '../../fields.js';
import { EXPORT_FORMATS, EXPORT_KINDS, EXPORT_STATUSES, type ExportFilters, type ExportRequest } from './index.js';

export { EXPORT_FORMATS, EXPORT_KINDS, EXPORT_STATUSES };

export const exportSchemas = lazySchemas(() => ({
  /**
   * The kind and format; every other key is a filter of the kind's list route, checked by the
   * service against that list's schema (an unknown one is 400 rest_invalid_param, as there).
   */
  create: Joi.object<ExportRequest, true>({
    kind: Joi.string()
      .valid(...EXPORT_KINDS)
      .required()
      .description('What to export: the rows of that list route.'),
    format: Joi.string()
      .valid(...EXPORT_FORMATS)
      .default('csv')
      .description('csv (RFC 4180, header row) or jsonl (JSON Lines: each row as the list route shows it).'),
  }).unknown(true),
  list: Joi.object<ListQuery<ExportFilters>, true>({
    ...paging,
    ...sorting(['id', 'created_at'] as const, 'id', 'desc'),
    status: anyOf(EXPORT_STATUSES).description('Only exports in one of these statuses (comma-separated or an array).'),
    kind: anyOf(EXPORT_KINDS).description('Only exports of these kinds (comma-separated or an array).'),
  }),
  exportId: Joi.object<{ id: number }, true>({ id: id().required() }),
}));
