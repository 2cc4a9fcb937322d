// The outbound layer: every fetch of a URL an administrator or a network supplied goes through
// the OutboundGuard (src/outbound/guard.ts). Services and network modules import it from here.
export { OutboundGuard, DEFAULT_MAX_BYTES } from './guard.js';
export { fetchBlocked } from './types.js';
export type { FetchBlockedReason, OutboundRequest, OutboundResponse, OutboundStream, OutboundGuardOptions } from './types.js';
export { AllowList, isAllowEntry, refusedRange } from './addresses.js';
export { guardedFetch, type FetchingGuard, type GuardedFetchOptions } from './fetch-api.js';
