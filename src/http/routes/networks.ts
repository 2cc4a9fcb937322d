// Networks: every network with its state, one network, custom network definitions, the postbacks
// a network received, postback secrets, test postbacks, a network's health (the intake watchdog),
// and what the network still owes.
import { none } from '../../fields.js';
import { networkSchemas } from '../../services/networks/schemas.js';
import { paymentSchemas } from '../../services/orders/schemas.js';
import { accepted, created, PagedResult, route, type RouteDef } from '../rest/types.js';

export const networksRoutes: RouteDef[] = [
  route({
    id: 'networks.payments',
    method: 'GET',
    path: '/networks/{id}/payments',
    auth: 'manage_options',
    description:
      'The payment lines the network reported (Awin poll, Admitad statement, impact.com clearing, custom feed or CSV import), newest first; `unknown=1`: only those for transactions we do not know.',
    validate: { params: paymentSchemas.networkId, query: paymentSchemas.list },
    async handler({ params, query }, ctx) {
      await ctx.networks.module(params.id);
      const { items, total } = await ctx.orders.listPayments(params.id, query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'networks.payments.import',
    method: 'POST',
    path: '/networks/{id}/payments/import',
    auth: 'manage_options',
    description:
      "Import the network's payment report (CSV text, read by the definition's `payments` mapping): each line recorded, already on file, unknown (kept), a conflict or invalid, with its line number; idempotent.",
    validate: { params: paymentSchemas.networkId, payload: paymentSchemas.import },
    handler: ({ params, payload, actor }, ctx) => ctx.orders.importPayments(params.id, payload.csv, actor),
  }),
  route({
    id: 'networks.payments.read',
    method: 'POST',
    path: '/networks/{id}/payments/read',
    auth: 'manage_options',
    description:
      "Start a networks.payments job reading the network's payments statement (Admitad): 202 with the job; 409 svc_network_no_payments for a network without one.",
    validate: { params: paymentSchemas.networkId, payload: none() },
    handler: async ({ params, actor }, ctx) => accepted(await ctx.orders.startPaymentsRead({ network: params.id }, actor)),
  }),
  route({
    id: 'networks.list',
    method: 'GET',
    path: '/networks',
    auth: 'manage_options',
    description: 'The networks, built-in then custom, by id, and their state. Secrets are never returned.',
    validate: { query: networkSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.networks.listPage(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'networks.get',
    method: 'GET',
    path: '/networks/{id}',
    auth: 'manage_options',
    description: 'One network and its state.',
    validate: { params: networkSchemas.networkId, query: none() },
    handler: ({ params }, ctx) => ctx.networks.get(params.id),
  }),
  route({
    id: 'networks.save',
    location: (network) => `/networks/${encodeURIComponent(network.id)}`,
    method: 'POST',
    path: '/networks/{id}',
    auth: 'manage_options',
    description:
      'Create (201) or update (200) a custom network: an update keeps every field it does not send (null clears one); a built-in network is 409 svc_network_not_custom.',
    validate: { params: networkSchemas.networkId, payload: networkSchemas.save },
    async handler({ params, payload, actor }, ctx) {
      const { network, created: isNew } = await ctx.networks.saveCustom(params.id, payload, actor);
      return isNew ? created(network) : network;
    },
  }),
  route({
    id: 'networks.configure',
    method: 'POST',
    path: '/networks/{id}/settings',
    auth: 'manage_options',
    description:
      'Set (or, with null, remove) settings of a network, secret ones included, as `cashtrack networks configure` does; secret values are never returned (shown as <name>_set).',
    validate: { params: networkSchemas.networkId, payload: networkSchemas.settings },
    handler: ({ params, payload, actor }, ctx) => ctx.networks.configure(params.id, payload.settings, actor),
  }),
  route({
    id: 'networks.switch',
    method: 'POST',
    path: '/networks/{id}/enabled',
    auth: 'manage_options',
    description:
      'Switch the network on or off for sync, polling and tracking links, as `cashtrack networks enable|disable` does: {network, changed}; a run already going finishes, and postbacks keep their own switch.',
    validate: { params: networkSchemas.networkId, payload: networkSchemas.networkSwitch },
    handler: ({ params, payload, actor }, ctx) => ctx.networks.switchNetwork(params.id, payload.enabled, actor),
  }),
  route({
    id: 'networks.postback-switch',
    method: 'POST',
    path: '/networks/{id}/postback',
    auth: 'manage_options',
    description:
      "Switch the network's postbacks on or off in one step: switching on makes a postback secret when the network has none (returned once) and says whether the global switch is still off.",
    validate: { params: networkSchemas.networkId, payload: networkSchemas.postbackSwitch },
    handler: ({ params, payload, actor }, ctx) => ctx.networks.switchPostbacks(params.id, payload.enabled, actor, { ip_allowlist: payload.ip_allowlist }),
  }),
  route({
    id: 'networks.postback-secret',
    method: 'POST',
    path: '/networks/{id}/postback/secret',
    auth: 'manage_options',
    description:
      'Make a new postback secret, returned once in this answer, as `cashtrack networks postback-secret ID --rotate` does: the old one stops at once or after grace_hours.',
    validate: { params: networkSchemas.networkId, payload: networkSchemas.rotateSecret },
    handler: ({ params, payload, actor }, ctx) => ctx.networks.rotatePostbackSecret(params.id, actor, payload),
  }),
  route({
    id: 'networks.postbacks',
    method: 'GET',
    path: '/networks/{id}/postbacks',
    auth: 'manage_options',
    description: 'Postbacks the network sent, newest first (orderby, order), with their outcome; secrets redacted.',
    validate: { params: networkSchemas.networkId, query: networkSchemas.postbacks },
    async handler({ params, query }, ctx) {
      const { items, total } = await ctx.postbacks.list({ ...query, network: params.id });
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'networks.postbacks.counts',
    method: 'GET',
    path: '/networks/{id}/postbacks/counts',
    auth: 'manage_options',
    description: "The network's postbacks per outcome under the list's other filters: {total, statuses} (the views row).",
    validate: { params: networkSchemas.networkId, query: networkSchemas.postbackCounts },
    handler: ({ params, query }, ctx) => ctx.postbacks.counts({ ...query, network: params.id }),
  }),
  route({
    id: 'networks.health',
    method: 'GET',
    path: '/networks/{id}/health',
    auth: 'manage_options',
    description:
      "The intake watchdog's view of a network: its state (ok, stalled, unknown) and why, the baseline for the current hour, the last hour's intake, its syncs and polls, and the last alarm.",
    validate: { params: networkSchemas.networkId, query: none() },
    handler: ({ params }, ctx) => ctx.watchdog.health(params.id),
  }),
  route({
    id: 'networks.postback-test',
    method: 'POST',
    path: '/networks/{id}/postback/test',
    auth: 'manage_options',
    description: "Send an authenticated test postback over HTTP to this daemon's own postback URL; it never records an order.",
    validate: { params: networkSchemas.networkId, payload: networkSchemas.test },
    handler: ({ params, payload, actor }, ctx) => ctx.postbacks.sendTest(params.id, payload, actor),
  }),
  route({
    id: 'networks.receivables',
    method: 'GET',
    path: '/networks/{id}/receivables',
    auth: 'manage_options',
    description:
      "What the network still owes, as `cashtrack networks receivables ID` shows: per currency the unpaid approved commission in age buckets beside the members' liabilities, and the variances (mismatched, unknown, overdue; each list capped at limit, with its full count).",
    validate: { params: networkSchemas.networkId, query: networkSchemas.receivables },
    handler: ({ params, query }, ctx) => ctx.receivables.forNetwork(params.id, { limit: query.limit }),
  }),
];
