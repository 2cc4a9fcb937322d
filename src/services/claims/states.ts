// What a claim can be, and which moves between those states the rules allow.
//
// open: waiting for support (no claim channel, a channel that needs more, a match to decide, a
// filing that failed); submitted: filed with the network, waiting for its answer; matched: tied to
// an order of the member's (found by us, or an administrator's match); approved: the network
// accepted it (its order is linked once the network reports it); declined: by the network or by
// support, with the reason; expired: past the network's deadline without an answer.
export const CLAIM_STATUSES = ['open', 'submitted', 'matched', 'approved', 'declined', 'expired'] as const;
export type ClaimStatus = (typeof CLAIM_STATUSES)[number];

/** The statuses a claim can still move from towards a match or an answer. */
export const LIVE_STATUSES: readonly ClaimStatus[] = ['open', 'submitted', 'expired'];

export const CLAIM_TRANSITIONS: Record<ClaimStatus, readonly ClaimStatus[]> = {
  open: ['submitted', 'matched', 'declined', 'expired'],
  submitted: ['open', 'approved', 'matched', 'declined', 'expired'],
  expired: ['matched', 'declined', 'approved'],
  approved: [],
  matched: [],
  declined: [],
};
