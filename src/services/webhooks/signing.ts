// The Standard Webhooks scheme (standardwebhooks.com): a `whsec_` secret of random bytes, and
// `webhook-signature: v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`. A receiver
// verifies with any Standard Webhooks library, or with the few lines in docs/api.md.
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** Crockford's base32: sortable, no look-alike letters. */
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A new subscription secret: `whsec_` and 32 random bytes in base64 (shown once). */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The last id's time and random part: ids made in one millisecond by one process still sort in order. */
let last = { time: -1, random: 0n };

/**
 * A delivery id, `msg_` and 26 characters: the creation time in milliseconds (10 base32
 * characters) and 80 random bits, incremented instead within one millisecond of one process, so
 * ids sort by creation (as ULIDs do). Stable across every attempt of the delivery, so receivers
 * deduplicate on it.
 */
export function newDeliveryId(now: Date): string {
  let time = Math.max(now.getTime(), last.time);
  let random: bigint;
  if (time === last.time) random = (last.random + 1n) & ((1n << 80n) - 1n);
  else random = BigInt(`0x${randomBytes(10).toString('hex')}`);
  last = { time, random };
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = BASE32[time % 32] + head;
    time = Math.floor(time / 32);
  }
  let tail = '';
  for (let i = 0; i < 16; i++) {
    tail = BASE32[Number(random & 31n)] + tail;
    random >>= 5n;
  }
  return `msg_${head}${tail}`;
}

/** The headers of one attempt (`secret` as newSecret makes it): the delivery id, the attempt's time (Unix seconds) and the signature. */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
