// A secret is bound to the origin it was given for: a network's token to its API's base URL, the
// AI key to the provider's. Changing the URL to another origin must give the secret again in the
// same request (or remove it); otherwise the old secret would follow the URL to a host it was never
// meant for. The services holding such pairs (networks, AI settings) check it with these.
import { ServiceError } from './errors.js';

/** A URL's origin; the text itself when it is not a URL (the caller's own checks refuse it). */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url.trim().toLowerCase();
  }
}

/** 400 svc_secret_origin_changed: a URL setting's new origin would receive secrets given for the old one. */
export function secretOriginChanged(field: string, secrets: string[], from: string, to: string): ServiceError {
  const them = secrets.length > 1 ? 'them' : 'it';
  return new ServiceError(
    'svc_secret_origin_changed',
    `Changing ${field} from ${from} to ${to} would send ${secrets.join(', ')} to another origin: give ${them} again in the same request, or remove ${them}.`,
    400,
    { field, secrets, from, to },
  );
}
