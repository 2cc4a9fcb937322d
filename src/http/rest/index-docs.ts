// The root and namespace index documents and OPTIONS bodies, generated from the route table.
import { schemaArgs } from './schema.js';
import type { RouteDef } from './types.js';

export const NAMESPACE = 'svc/v1';

/** `/ledger/entries/{id}` → `/svc/v1/ledger/entries/(?P<id>[\d]+)` (the host platform's route keys). */
export function routeKey(def: RouteDef): string {
  const described = def.validate.params?.describe() as { keys?: Record<string, { type: string }> } | undefined;
  return `/${NAMESPACE}${def.path}`.replace(/\{(\w+)\}/g, (_, name: string) => {
    const type = described?.keys?.[name]?.type;
    return type === 'number' ? `(?P<${name}>[\\d]+)` : `(?P<${name}>[^/]+)`;
  });
}

export interface RouteData {
  namespace: string;
  methods: string[];
  endpoints: { methods: string[]; args: Record<string, unknown> }[];
  _links?: { self: { href: string }[] };
}

/** Groups the definitions by route key, in table order. */
export function routeData(defs: RouteDef[], baseUrl: string): Record<string, RouteData> {
  const routes: Record<string, RouteData> = {};
  routes[`/${NAMESPACE}`] = {
    namespace: NAMESPACE,
    methods: ['GET'],
    endpoints: [
      {
        methods: ['GET'],
        args: { namespace: { type: 'string', default: NAMESPACE, required: false }, context: { type: 'string', default: 'view', required: false } },
      },
    ],
    _links: { self: [{ href: `${baseUrl}${NAMESPACE}` }] },
  };
  for (const def of defs) {
    const key = routeKey(def);
    const methods = def.method === 'GET' ? ['GET'] : def.method === 'POST' ? ['POST'] : [def.method];
    const entry = (routes[key] ??= { namespace: NAMESPACE, methods: [], endpoints: [] });
    entry.methods.push(...methods.filter((m) => !entry.methods.includes(m)));
    entry.endpoints.push({ methods, args: schemaArgs(def.validate.query, def.validate.payload) });
    if (!key.includes('(?P<')) entry._links = { self: [{ href: `${baseUrl}${key.slice(1)}` }] };
  }
  return routes;
}

export function rootIndex(defs: RouteDef[], baseUrl: string, siteUrl: string): Record<string, unknown> {
  return {
    name: 'cashtrack',
    description: 'Back office of a cashback site',
    url: siteUrl,
    home: siteUrl,
    gmt_offset: 0,
    timezone_string: 'UTC',
    namespaces: [NAMESPACE],
    authentication: { 'application-passwords': { endpoints: { authorization: null } } },
    routes: {
      '/': {
        namespace: '',
        methods: ['GET'],
        endpoints: [{ methods: ['GET'], args: { context: { type: 'string', default: 'view', required: false } } }],
        _links: { self: [{ href: baseUrl }] },
      },
      ...routeData(defs, baseUrl),
    },
    _links: { help: [{ href: 'https://developer.wordpress.org/rest-api/' }] },
  };
}

export function namespaceIndex(defs: RouteDef[], baseUrl: string): Record<string, unknown> {
  return { namespace: NAMESPACE, routes: routeData(defs, baseUrl), _links: { up: [{ href: baseUrl }] } };
}
