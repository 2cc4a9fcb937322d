// Input schemas of the network routes, shared with `cashtrack networks ...`: the networks, their
// custom definitions, the postbacks a network sent and test postbacks.
import Joi from 'joi';
import { customDefinitionPatchSchema } from '../../networks/custom-definition.js';
import { networkId, paging, type Paging, lazySchemas } from '../../fields.js';
import { postbackSchemas } from '../postbacks/schemas.js';
import { POSTBACK_MODES, type PostbackMode } from './postback-secrets.js';
export { POSTBACK_MODES, type PostbackMode };

/** A setting's name, as custom definitions name theirs (built-in modules' names fit too). */
const SETTING_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Built-in modules, or networks defined as data. */
export const NETWORK_KINDS = ['builtin', 'custom'] as const;

/** Input schemas, shared with `cashtrack networks ...`. */
export const networkSchemas = lazySchemas(() => ({
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
  /** The counts per outcome of a network's postbacks: the list's filters without the outcome ones. */
  postbackCounts: postbackSchemas.counts,
  /** A test postback to the network's own URL. */
  test: postbackSchemas.test,
  /** Settings to set (a string) or remove (null or ''); secret ones are written, never read back. Names are checked against the network's keys by the service. */
  settings: Joi.object<{ settings: Record<string, string | null> }, true>({
    settings: Joi.object()
      .pattern(Joi.string().pattern(SETTING_NAME).max(64), Joi.string().allow('', null).max(4096))
      .min(1)
      .max(100)
      .required()
      .description('Setting name → value; null or "" removes the setting.'),
  }),
  /** The network's own switch (sync, polling, tracking links). */
  networkSwitch: Joi.object<{ enabled: boolean }, true>({
    enabled: Joi.boolean().required().description('On or off for sync, polling and tracking links; postbacks keep their own switch.'),
  }),
  /** The network's postback switch, with its IP allowlist. */
  postbackSwitch: Joi.object<{ enabled: boolean; ip_allowlist?: string[] | null }, true>({
    enabled: Joi.boolean().required().description('On or off; switching on a network without a postback secret generates one, returned once.'),
    ip_allowlist: Joi.array()
      .items(Joi.string().max(64))
      .max(100)
      .allow(null)
      .description('Addresses or CIDR ranges postbacks are accepted from; [] or null: any. Absent: unchanged.'),
  }),
  /** A new postback secret (the old one ends at once, or after grace_hours); the service checks the range too. */
  rotateSecret: Joi.object<{ mode?: PostbackMode; grace_hours?: number }, true>({
    mode: Joi.string()
      .valid(...POSTBACK_MODES)
      .description("token or hmac (default: the network's current mode); the mode changes only with a new secret."),
    grace_hours: Joi.number()
      .integer()
      .min(0)
      .max(24 * 7)
      .description('Keep accepting the old secret for this many hours (default 0: it stops at once).'),
  }),
  /** What the network still owes (services/orders/receivables.ts): how many items each variance list shows. */
  receivables: Joi.object<{ limit: number }, true>({
    limit: Joi.number()
      .integer()
      .min(1)
      .max(100)
      .default(20)
      .description('Show at most this many items in each variance list (1-100, default 20); the counts are always complete.'),
  }),
}));
