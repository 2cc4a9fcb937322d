// Input schemas of the network routes, shared with `cashtrack networks ...`: the networks, their
// custom definitions, the postbacks a network sent and test postbacks.
import Joi from 'joi';
import { customDefinitionPatchSchema } from '../../networks/custom-definition.js';
import { networkId, paging, type Paging } from '../../fields.js';
import { postbackSchemas } from '../postbacks/schemas.js';
export { POSTBACK_MODES, type PostbackMode } from './postback-secrets.js';

/** Built-in modules, or networks defined as data. */
export const NETWORK_KINDS = ['builtin', 'custom'] as const;

/** Input schemas, shared with `cashtrack networks ...`. */
export const networkSchemas = {
  list: Joi.object<Paging & { kind?: (typeof NETWORK_KINDS)[number] }, true>({
    ...paging,
    kind: Joi.string()
      .valid(...NETWORK_KINDS)
      .description('Only built-in or only custom networks.'),
  }),
  networkId: Joi.object<{ id: string }, true>({ id: networkId().required() }),
  /** Every field optional: an update keeps what it does not send; a new network's required fields are checked by the service. */
  save: customDefinitionPatchSchema,
  /** The postbacks the network sent. */
  postbacks: postbackSchemas.list,
  /** A test postback to the network's own URL. */
  test: postbackSchemas.test,
};
