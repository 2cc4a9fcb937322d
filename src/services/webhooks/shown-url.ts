// How a subscription's URL is shown and logged. Receivers often take a credential in the URL
// (`https://user:pass@hooks.example/`, `?token=...`): the whole URL is kept to deliver to, but its
// user info, query and fragment are secret wherever it is shown (API answers, the CLI) or logged.
import { REDACTED } from '../../secret-values.js';

/** The URL with its user info, query and fragment each replaced by "[redacted]". */
export function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return REDACTED;
  }
  const userinfo = parsed.username || parsed.password ? `${REDACTED}@` : '';
  const query = parsed.search ? `?${REDACTED}` : '';
  const fragment = parsed.hash ? `#${REDACTED}` : '';
  return `${parsed.protocol}//${userinfo}${parsed.host}${parsed.pathname}${query}${fragment}`;
}
