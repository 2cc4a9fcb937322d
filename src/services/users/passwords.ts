// Login passwords: scrypt hashes that carry their own cost, checked in constant time.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** OWASP's floor for scrypt: N=2^17, r=8, p=1. Lower costs are accepted only in tests. */
export const SCRYPT_LOG_N = 17;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
/** Stored hashes name their own cost; one that asks for more than this is refused as damaged. */
const MAX_LOG_N = 22;
const HASH_PATTERN = /^\$scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([\w-]+)\$([\w-]+)$/;

function scryptOptions(N: number, r: number, p: number): ScryptOptions {
  // scrypt needs 128*r*(N+p+2) bytes (128 MiB at N=2^17, r=8); Node refuses anything above maxmem.
  return { N, r, p, maxmem: 128 * r * (N + p + 2) + 1024 * 1024 };
}

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `$scrypt$N=131072,r=8,p=1$<salt>$<hash>` (base64url): the cost travels with the hash. */
export async function hashPassword(password: string, logN = SCRYPT_LOG_N): Promise<string> {
  const N = 2 ** logN;
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32, scryptOptions(N, SCRYPT_R, SCRYPT_P));
  return `$scrypt$N=${N},r=${SCRYPT_R},p=${SCRYPT_P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/**
 * Checks `password` against a stored hash of any cost. Without a usable hash it spends the time of
 * a check at `logN` (the current cost) so that a missing user or hash is not observable.
 */
export async function verifyPassword(password: string, stored: string | null, logN = SCRYPT_LOG_N): Promise<boolean> {
  const m = stored?.match(HASH_PATTERN);
  const [N, r, p] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  if (!m || N < 2 || N > 2 ** MAX_LOG_N || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) {
    await scrypt(password, Buffer.alloc(16), 32, scryptOptions(2 ** logN, SCRYPT_R, SCRYPT_P));
    return false;
  }
  const expected = Buffer.from(m[5], 'base64url');
  const key = await scrypt(password, Buffer.from(m[4], 'base64url'), expected.length, scryptOptions(N, r, p));
  return timingSafeEqual(key, expected);
}

/** True when a stored hash is weaker than what `hashPassword(_, logN)` makes now (rehash on login). */
export function needsRehash(stored: string, logN = SCRYPT_LOG_N): boolean {
  const m = stored.match(HASH_PATTERN);
  if (!m) return false;
  return Number(m[1]) < 2 ** logN || Number(m[2]) < SCRYPT_R || Number(m[3]) < SCRYPT_P;
}
