// Input schema of the overview route, shared with `cashtrack overview`.
import Joi from 'joi';

/** Input schema, shared with `cashtrack overview`. */
export const overviewQuery = Joi.object<{ days: number }, true>({
  days: Joi.number().integer().min(1).max(366).default(30).description('The order window: orders recorded in the last this many days.'),
});
