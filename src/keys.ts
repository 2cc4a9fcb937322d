// Purpose-bound keys derived from the one configured secret (HKDF), so a nonce key can never be
// used as a password-hash key; and the box that seals secrets with the secret-box key.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ServiceError } from './errors.js';

export interface Keys {
  nonce: Buffer;
  appPassword: Buffer;
  session: Buffer;
  postback: Buffer;
  /** HMAC-SHA256 key of the `/go/{token}` click tokens. */
  clickToken: Buffer;
  /** HMAC key of a click's user-agent hash (the raw user agent is never stored). */
  clickDevice: Buffer;
  /** AES-256-GCM key for secrets the daemon must read back (HMAC postback secrets, network credentials). */
  secretBox: Buffer;
}

export function deriveKeys(secret: string): Keys {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from('cashtrack'), info, 32));
  return {
    nonce: derive('rest-nonce'),
    appPassword: derive('app-password'),
    session: derive('session'),
    postback: derive('postback'),
    clickToken: derive('click-token'),
    clickDevice: derive('click-device'),
    secretBox: derive('secret-box'),
  };
}

/**
 * AES-256-GCM with a random 96-bit IV; the additional data binds a ciphertext to its row and
 * purpose, so one network's secret pasted into another row does not decrypt.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {}

  seal(plain: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `e1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** Throws 500 svc_secret_unreadable when the ciphertext does not open (the secret changed, or tampering). */
  open(sealed: string, aad: string): string {
    try {
      if (!sealed.startsWith('e1:')) throw new Error('unknown format');
      const raw = Buffer.from(sealed.slice(3), 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new ServiceError(
        'svc_secret_unreadable',
        'A stored secret cannot be decrypted: the configured secret (CASHTRACK_SECRET) changed since it was stored. Set it again (rotate the postback secret, configure the network credentials).',
        500,
      );
    }
  }
}
