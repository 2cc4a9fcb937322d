// Input schemas of the logo routes, shared with `cashtrack logos ...`.
import Joi from 'joi';
import { flag, networkId, lazySchemas } from '../../fields.js';
import { ADVERTISER_STATUSES } from '../advertisers/schemas.js';
import type { LogoBulkParams } from './bulk.js';

/** `?force`, `?force=1`, `force: true`. */
const force = () => flag().truthy('').description('Fetch again although the advertiser has a logo.');

/** Input schemas, shared with `cashtrack logos ...`. */
export const logoSchemas = lazySchemas(() => ({
  fetch: Joi.object<{ force?: boolean }, true>({ force: force() }),
  bulk: Joi.object<LogoBulkParams, true>({
    network: networkId().description('Only advertisers of this network.'),
    status: Joi.string()
      .valid(...ADVERTISER_STATUSES)
      .description('Only advertisers with this status.'),
    force: force().default(false),
  }),
}));
