// The click id: what the network carries back in its sub-id field. "c" and 18 lowercase base-32
// characters (0-9, a-v): the click time in milliseconds (10 characters), then 40 random bits (8).
// Short and alphanumeric, so it fits every network's sub-id (Admitad keeps 50 characters,
// Rakuten's u1 alphanumerics only, none lower-cases it wrongly); time-ordered, so the primary key
// grows with time; and never read as a member's numeric id or a login of the old sub-ids.
import { randomBytes } from 'node:crypto';

const DIGITS = '0123456789abcdefghijklmnopqrstuv';

/** A click id as it appears in a sub-id. */
export const CLICK_ID = /^c[0-9a-v]{18}$/;

export function isClickId(value: unknown): value is string {
  return typeof value === 'string' && CLICK_ID.test(value);
}

/** A new click id at `now`. */
export function newClickId(now: Date): string {
  let time = Math.max(0, Math.floor(now.getTime()));
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = DIGITS[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const random = randomBytes(5);
  let bits = 0n;
  for (const b of random) bits = (bits << 8n) | BigInt(b);
  let tail = '';
  for (let i = 0; i < 8; i++) {
    tail = DIGITS[Number(bits & 31n)] + tail;
    bits >>= 5n;
  }
  return `c${head}${tail}`;
}
