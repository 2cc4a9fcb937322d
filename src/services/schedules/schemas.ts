// Input schemas of the schedule routes, shared with `cashtrack schedules ...`.
import Joi from 'joi';
import { SCHEDULE_NAMES } from '../../config/index.js';
import { networkId, lazySchemas } from '../../fields.js';

/** Input schemas, shared with `cashtrack schedules ...`. */
export const scheduleSchemas = lazySchemas(() => ({
  // Any name is let through to the service, which answers an unknown one with svc_unknown_schedule.
  name: Joi.object<{ name: string }, true>({
    name: Joi.string()
      .max(64)
      .pattern(/^[a-z0-9_.-]+$/, 'schedule name')
      .required()
      .description(`The schedule: ${SCHEDULE_NAMES.join(', ')}.`),
  }),
  run: Joi.object<{ network?: string }, true>({
    network: networkId().description('Per-network schedules: only this network (default: each enabled, configured network).'),
  }),
}));
