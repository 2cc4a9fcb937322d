// The built-in network modules. Custom networks (data, not code) are built by the networks
// service; services look a built-in up here by id.
import { createAdmitadModule } from './admitad.js';
import { createAwinModule } from './awin.js';
import { createImpactModule } from './impact.js';
import type { NetworkModule } from './types.js';

export { createAdmitadModule, createAwinModule, createImpactModule };
export { NetworkError, isNetworkError } from './network-error.js';
export type { ModuleOptions } from './module-support.js';

/** One production instance per network: rate-limit buckets and token caches live in it. */
export const builtInModules: NetworkModule[] = [createAwinModule(), createAdmitadModule(), createImpactModule()];

const byId = new Map(builtInModules.map((m) => [m.id, m]));

/** The built-in module with this id, or null. */
export function getBuiltInModule(id: string): NetworkModule | null {
  return byId.get(id) ?? null;
}
