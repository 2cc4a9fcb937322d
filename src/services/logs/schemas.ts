// Input schema of the log route, shared with `cashtrack logs`.
import Joi from 'joi';
import { anyOf, anyOfPattern, dateRange, paging, sorting, type ListQuery } from '../../fields.js';
import { LOG_LEVELS, LOG_ORDERBY, type LogCountFilters, type LogFilters, type LogOrderby } from './index.js';

/** The log's filters other than the level ones: the counts per level take the same. */
const listFilters = {
  source: anyOfPattern(Joi.string().max(64)).description('Only entries from these sources (e.g. auth,users).'),
  search: Joi.string().max(200).description('Entries whose message contains this text.'),
  ...dateRange('entries written (time)'),
  after_id: Joi.number().integer().min(0).description('Entries with a larger id: to follow the log, pass the largest id seen.'),
};

export const logsQuery = Joi.object<ListQuery<LogFilters>, true>({
  ...paging,
  ...sorting(Object.keys(LOG_ORDERBY) as LogOrderby[], 'id', 'desc'),
  level: anyOf(LOG_LEVELS).description('Only entries of one of these levels (comma-separated or an array).'),
  level_exclude: anyOf(LOG_LEVELS).description('Only entries of none of these levels.'),
  min_level: Joi.string()
    .valid(...LOG_LEVELS)
    .description('Only entries of this level and above (warning: warnings and errors).'),
  ...listFilters,
});

/** `GET /logs/counts`: the log's filters without the level ones. */
export const logCountsQuery = Joi.object<ListQuery<LogCountFilters>, true>(listFilters);
