// Screens live at /admin/<screen>[/<id>]; a screen's view state (filters, sort, page, per page) is
// the query string, so a copied link reproduces exactly what was on screen.
import { useEffect, useState } from 'react';

export const BASE = '/admin';

export interface Location {
  /** Path segments after /admin: ['members', '12']. */
  segments: string[];
  query: URLSearchParams;
}

function read(): Location {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '';
  return { segments: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

/** Goes to an admin URL (`/orders?status=pending`); `replace` keeps the history entry (view state changes). */
export function navigate(to: string, replace = false): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to.startsWith('/') ? '' : '/'}${to}`;
  if (url === window.location.pathname + window.location.search) return;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const l of listeners) l();
}

/** The current location, re-read whenever it changes. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return loc;
}

/** An admin link's href: `href('/orders', {status: 'pending'})`. */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return `${BASE}${path}${s ? `?${s}` : ''}`;
}

/** Follows an in-app link without reloading the page (plain clicks only; new tabs keep working). */
export function onLinkClick(event: React.MouseEvent<HTMLAnchorElement>): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(event.currentTarget.getAttribute('href') ?? BASE);
}
