// The one way the screens reach the daemon: @wordpress/api-fetch over the documented namespace,
// with the root-URL and nonce middlewares. When the API answers rest_cookie_invalid_nonce (the
// nonce aged out), api-fetch reads a fresh one from GET /rest-nonce and repeats the request, so the
// user notices nothing. Sign-in and sign-out are the plain /login and /logout endpoints.
import apiFetch, { type APIFetchOptions } from '@wordpress/api-fetch';

export const NAMESPACE = '/svc/v1';

/** The REST root the daemon wrote into the page (server.rest_root). */
function restRoot(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="cashtrack-rest-root"]');
  return meta?.content || '/wp-json/';
}

let nonceMiddleware: ReturnType<typeof apiFetch.createNonceMiddleware> | null = null;

/** Wires api-fetch for a signed-in session (once; a new sign-in only swaps the nonce). */
export function startSession(nonce: string): void {
  if (nonceMiddleware) {
    nonceMiddleware.nonce = nonce;
    return;
  }
  apiFetch.use(apiFetch.createRootURLMiddleware(restRoot()));
  nonceMiddleware = apiFetch.createNonceMiddleware(nonce);
  apiFetch.use(nonceMiddleware);
  // api-fetch refreshes the nonce from here on rest_cookie_invalid_nonce and retries the request.
  (apiFetch as unknown as { nonceMiddleware: unknown }).nonceMiddleware = nonceMiddleware;
  apiFetch.nonceEndpoint = '/rest-nonce';
}

/** An error as the API answers it: WordPress's {code, message, data}. */
export interface ApiError {
  code: string;
  message: string;
  data?: { status?: number; [key: string]: unknown };
}

export function isApiError(value: unknown): value is ApiError {
  return typeof value === 'object' && value !== null && typeof (value as ApiError).code === 'string' && typeof (value as ApiError).message === 'string';
}

/** The message to show for a refusal: the API's own words; anything else in plain words. */
export function errorMessage(err: unknown): string {
  if (isApiError(err)) return err.message;
  return 'The server could not be reached. Check your connection and try again.';
}

/** A call in the namespace: `api('/orders', {query})` → parsed JSON. */
export function api<T>(path: string, options: Omit<APIFetchOptions<true>, 'path' | 'url' | 'parse'> & { query?: Record<string, unknown> } = {}): Promise<T> {
  const { query, ...rest } = options;
  return apiFetch<T>({ ...rest, path: NAMESPACE + path + queryString(query) });
}

/**
 * A file the API answers with `Content-Disposition` (a member's data export), as a Blob and its
 * file name. A refusal is read as the API's error JSON, like `api`'s.
 */
export async function apiDownload(path: string): Promise<{ blob: Blob; filename: string }> {
  let res: Response;
  try {
    res = await apiFetch<Response, false>({ path: NAMESPACE + path, parse: false });
  } catch (err) {
    // Without parsing, api-fetch rejects with the Response itself.
    if (err instanceof Response) throw await err.json().catch(() => err);
    throw err;
  }
  const filename = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? 'download';
  return { blob: await res.blob(), filename };
}

/**
 * The address of a namespace route for the browser itself to open (a file download, which the
 * browser streams to disk): the session's nonce rides in `_wpnonce`, as WordPress takes it.
 */
export function downloadUrl(path: string): string {
  return `${restRoot().replace(/\/$/, '')}${NAMESPACE}${path}${queryString({ _wpnonce: nonceMiddleware?.nonce })}`;
}

/** A page of a list: the rows and the WordPress paging headers. */
export interface Page<T> {
  items: T[];
  total: number;
  totalPages: number;
}

export async function apiPage<T>(path: string, query: Record<string, unknown>): Promise<Page<T>> {
  const res = await apiFetch<Response, false>({ path: NAMESPACE + path + queryString(query), parse: false });
  const items = (await res.json()) as T[];
  return { items, total: Number(res.headers.get('X-WP-Total') ?? items.length), totalPages: Number(res.headers.get('X-WP-TotalPages') ?? 1) };
}

/** `?a=1&b=x,y`: arrays joined by commas (the API takes both forms), empty values left out. */
export function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    params.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** The signed-in user as POST /login answers. */
export interface SessionUser {
  id: number;
  login: string;
  email: string;
  display_name: string;
  role: string;
}

async function plainPost(path: string, body: Record<string, string>, nonce?: string): Promise<Response> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
  if (nonce) headers['X-WP-Nonce'] = nonce;
  return fetch(path, { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify(body) });
}

/** POST /login: the session cookie is set by the answer; the nonce starts the API session. */
export async function signIn(login: string, password: string): Promise<SessionUser> {
  const res = await plainPost('/login', { login, password });
  const body = (await res.json().catch(() => null)) as { user: SessionUser; nonce: string } | ApiError | null;
  if (!res.ok || !body || !('nonce' in body)) throw isApiError(body) ? body : { code: 'http_error', message: `Sign-in failed (${res.status}).` };
  startSession(body.nonce);
  return body.user;
}

/** The session of the cookie, if any: GET /rest-nonce, then who it is (GET /users/me). */
export async function resumeSession(): Promise<SessionUser | null> {
  const res = await fetch('/rest-nonce', { credentials: 'same-origin' });
  if (!res.ok) return null;
  startSession(await res.text());
  return api<SessionUser>('/users/me');
}

/** POST /logout: revokes the session on the server, then forgets the page's state. */
export async function signOut(): Promise<void> {
  await plainPost('/logout', { _wpnonce: nonceMiddleware?.nonce ?? '' }, nonceMiddleware?.nonce);
}
