// Input schema of the log route, shared with `cashtrack logs`.
import Joi from 'joi';
import { dateTime, paging } from '../../fields.js';
import { LOG_LEVELS, type LogFilters } from './index.js';

export const logsQuery = Joi.object<LogFilters, true>({
  ...paging,
  level: Joi.string()
    .valid(...LOG_LEVELS)
    .description('Only entries of this level.'),
  min_level: Joi.string()
    .valid(...LOG_LEVELS)
    .description('Only entries of this level and above (warning: warnings and errors).'),
  source: Joi.string().max(64).description('Only entries from this source (e.g. auth, users).'),
  search: Joi.string().max(200).description('Entries whose message contains this text.'),
  after: dateTime().description('Entries after this time (ISO 8601).'),
  before: dateTime().description('Entries before this time (ISO 8601).'),
  after_id: Joi.number().integer().min(0).description('Entries with a larger id: to follow the log, pass the largest id seen.'),
  order: Joi.string().valid('asc', 'desc').default('desc').description('desc: newest first; asc: oldest first.'),
});
