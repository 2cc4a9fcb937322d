// Purpose-bound keys derived from the one configured secret (HKDF), so a nonce key can never be
// used as a password-hash key.
import { hkdfSync } from 'node:crypto';

export interface Keys {
  nonce: Buffer;
  appPassword: Buffer;
  session: Buffer;
  postback: Buffer;
  /** AES-256-GCM key for secrets the daemon must read back (HMAC postback secrets, network credentials). */
  secretBox: Buffer;
}

export function deriveKeys(secret: string): Keys {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from('cashtrack'), info, 32));
  return { nonce: derive('rest-nonce'), appPassword: derive('app-password'), session: derive('session'), postback: derive('postback'), secretBox: derive('secret-box') };
}
